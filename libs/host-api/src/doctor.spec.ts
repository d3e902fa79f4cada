import { hostPaths, type HostPaths } from '@host/host-core';
import { PluginInstaller } from '@host/host-installer';
import { buildZip, createUnavailableRuntime } from '@host/host-installer/testing';
import { FilePendingUpdateStore, FileSettingsStore, JsonRegistryStore } from '@host/host-store';
import { writeRawFixture } from '@host/plugin-conformance/testing';
import type { Express } from 'express';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp, type AppDeps } from './app';
import { ensureAdminToken } from './auth';
import { doctorReportFile } from './routes/doctor-routes';

/** A package of the SDK-less fixture plugin, conforming or broken one way. */
function rawPackage(dir: string, pluginId: string, fault: '' | 'no-method-not-found' | 'no-completion' = ''): Buffer {
  writeRawFixture(dir, fault, pluginId);
  return buildZip(['manifest.json', 'plugin.mjs'].map((name) => ({ name, data: readFileSync(join(dir, name)) })));
}

describe('POST and GET /api/plugins/{pluginId}/doctor', () => {
  let dataDir: string;
  let paths: HostPaths;
  let app: Express;
  let token: string;
  let close: () => Promise<void>;
  let deps: AppDeps;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'api-doctor-'));
    paths = hostPaths(dataDir);
    const store = await JsonRegistryStore.open(paths.stateDir);
    const runtime = createUnavailableRuntime();
    const installer = new PluginInstaller({
      paths,
      store,
      pendingUpdates: new FilePendingUpdateStore(join(paths.stateDir, 'pending')),
      runtime,
    });
    await installer.init();
    const admin = await ensureAdminToken(store);
    token = admin.generated!;
    deps = { paths, store, settings: new FileSettingsStore(paths), installer, runtime, adminTokenHash: admin.hash };
    app = createApp(deps);
    close = () => store.close();
  });
  afterEach(async () => {
    await close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const authed = (method: 'get' | 'post', path: string) => request(app)[method](path).set('Authorization', `Bearer ${token}`);
  const install = async (zip: Buffer) => {
    const res = await authed('post', '/api/plugins/packages').attach('package', zip, 'plugin.zip');
    expect(res.status).toBe(201);
  };

  it('runs the suite on the installed package, stores the report and serves it; the plugin data stays untouched', async () => {
    await install(rawPackage(join(dataDir, 'src-good'), 'org.conformance.good'));
    expect((await authed('get', '/api/plugins/org.conformance.good/doctor')).body).toEqual({ report: null });

    const res = await authed('post', '/api/plugins/org.conformance.good/doctor');
    expect(res.status).toBe(200);
    expect(res.body.report).toMatchObject({
      passed: true,
      plugin: { pluginId: 'org.conformance.good' },
      source: 'plugins-v2/org.conformance.good',
    });
    expect(res.body.report.checks.every((c: { status: string }) => c.status === 'pass')).toBe(true);

    const stored = await authed('get', '/api/plugins/org.conformance.good/doctor');
    expect(stored.body).toEqual({ report: res.body.report });
    expect(existsSync(doctorReportFile(paths, 'org.conformance.good'))).toBe(true);
    // The suite ran with temporary folders: the plugin's own data folder got nothing.
    const data = paths.dataDirOf('org.conformance.good');
    expect(existsSync(data) ? readdirSync(data) : []).toEqual([]);
  }, 60_000);

  it('shows a stored report only for the package it checked: after an update the plugin has none', async () => {
    await install(rawPackage(join(dataDir, 'src-v1'), 'org.conformance.updated'));
    expect((await authed('post', '/api/plugins/org.conformance.updated/doctor')).status).toBe(200);
    expect((await authed('get', '/api/plugins/org.conformance.updated/doctor')).body.report).not.toBeNull();

    // Another build of the same plugin: the update waits for confirmation, then replaces the package.
    writeFileSync(join(dataDir, 'src-v1', 'plugin.mjs'), `${readFileSync(join(dataDir, 'src-v1', 'plugin.mjs'), 'utf8')}\n// 1.0.1\n`);
    const zip = buildZip(['manifest.json', 'plugin.mjs'].map((name) => ({ name, data: readFileSync(join(dataDir, 'src-v1', name)) })));
    const pending = await authed('post', '/api/plugins/packages').attach('package', zip, 'plugin.zip');
    expect(pending.status).toBe(409);
    const confirmed = await authed('post', `/api/plugins/packages/pending/${pending.body.error.details.pendingUpdate.id}/confirm`).send({});
    expect(confirmed.status).toBe(200);
    expect((await authed('get', '/api/plugins/org.conformance.updated/doctor')).body).toEqual({ report: null });
  }, 60_000);

  it('reports a failing plugin with the check that names its fault (200: the run itself succeeded)', async () => {
    await install(rawPackage(join(dataDir, 'src-bad'), 'org.conformance.bad', 'no-method-not-found'));
    const res = await authed('post', '/api/plugins/org.conformance.bad/doctor');
    expect(res.status).toBe(200);
    expect(res.body.report.passed).toBe(false);
    expect(res.body.report.checks.find((c: { id: string }) => c.id === 'rpc.method-not-found')).toMatchObject({ status: 'fail' });
  }, 60_000);

  it('refuses a second run for the same plugin while one runs, and unknown plugins', async () => {
    await install(rawPackage(join(dataDir, 'src-twice'), 'org.conformance.twice'));
    const first = authed('post', '/api/plugins/org.conformance.twice/doctor').then((r) => r);
    // The first request is being handled once its run holds the plugin; poll for the conflict.
    let second = await authed('post', '/api/plugins/org.conformance.twice/doctor');
    for (let i = 0; i < 50 && second.status === 200; i++) second = await authed('post', '/api/plugins/org.conformance.twice/doctor');
    expect((await first).status).toBe(200);
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({ code: 'PLUGIN_STATE_CONFLICT' });
    expect(second.body.error.message).toMatch(/already runs for org\.conformance\.twice/);

    for (const method of ['get', 'post'] as const) {
      const missing = await authed(method, '/api/plugins/org.example.nothing/doctor');
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe('PLUGIN_NOT_FOUND');
    }
  }, 60_000);

  it('ends a run past its time bound with DOCTOR_RUN_TIMEOUT, leaves no plugin process and frees the slot', async () => {
    // The plugin never completes an event: the suite waits out its 2 s handler deadline, past the 1.5 s bound however fast the machine.
    app = createApp({ ...deps, doctorTimeoutMilliseconds: 1_500 });
    await install(rawPackage(join(dataDir, 'src-slow'), 'org.conformance.slow', 'no-completion'));
    const res = await authed('post', '/api/plugins/org.conformance.slow/doctor');
    expect(res.status).toBe(504);
    expect(res.body.error).toMatchObject({
      code: 'DOCTOR_RUN_TIMEOUT',
      details: { pluginId: 'org.conformance.slow', timeoutSeconds: 1.5 },
    });
    await waitFor(() => processesIn(paths.packageDir('org.conformance.slow')).length === 0, "the run's plugin processes to end");
    expect(readdirSync(join(paths.stateDir, 'doctor-processes'))).toEqual([]);
    // The slot is free again at once.
    expect((await authed('post', '/api/plugins/org.conformance.slow/doctor')).body.error.code).toBe('DOCTOR_RUN_TIMEOUT');
  }, 60_000);
});

/** Pids of the processes working in `dir` (a plugin runs in its package folder). */
function processesIn(dir: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readlinkSync(`/proc/${name}/cwd`) === dir) found.push(Number(name));
    } catch {
      // gone, or another user's
    }
  }
  return found;
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
