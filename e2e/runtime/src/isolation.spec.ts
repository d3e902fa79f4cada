// A hostile plugin under the built host, in each isolation mode this machine
// offers: what it can reach, whether its fork bomb and its allocation are
// contained, and that the host keeps serving another plugin meanwhile.
import { buildZip } from '@host/host-installer/testing';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, buildHost, isolationModesHere, packageForm, startHost, type RunningHost } from '@host/e2e-support';

jest.setTimeout(120_000);

const FIXTURE = join(__dirname, '../../test-fixtures/misbehaving-plugin');
const MODES = isolationModesHere();

function pluginPackage(id: string, args: string[], network?: string): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  Object.assign(manifest, {
    pluginId: id,
    transport: {
      type: 'stdio-jsonrpc',
      stdio: { command: 'node', args: ['plugin.mjs', '--host-stdio', ...args], workingDirectory: '.', ...(network ? { network } : {}) },
    },
  });
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest, null, 2) },
    { name: 'plugin.mjs', data: readFileSync(join(FIXTURE, 'plugin.mjs')) },
  ]);
}

async function install(host: RunningHost, id: string, args: string[], network?: string, start = true): Promise<void> {
  const r = await api(
    host,
    'POST',
    '/api/plugins/packages',
    packageForm(pluginPackage(id, args, network), { startAfterInstall: String(start) }),
  );
  if (r.status >= 300) throw new Error(`install of ${id} failed: ${JSON.stringify(r.body)}`);
}

async function logLine(host: RunningHost, id: string, prefix: string, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await api(host, 'GET', `/api/plugins/${id}/logs`);
    const line = (r.body.lines as Array<{ message: string }> | undefined)?.find((l) => l.message.startsWith(prefix));
    if (line) return line.message.slice(prefix.length);
    if (Date.now() > deadline) throw new Error(`no "${prefix}" in the log of ${id}: ${JSON.stringify(r.body).slice(0, 2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function status(host: RunningHost, id: string): Promise<any> {
  return (await api(host, 'GET', `/api/plugins/${id}`)).body.plugin;
}

/** The bystander still answers a command: the host keeps serving. */
async function echoes(host: RunningHost, text: string): Promise<boolean> {
  const r = await api(host, 'POST', '/api/console/messages', {
    conversation: { type: 'c2c', id: 'u1' },
    sender: { id: 'u1' },
    text: `/echo ${text}`,
  });
  return JSON.stringify(r.body).includes(text);
}

/** A file of the embedded database (the first file below state/ in a folder). */
function databaseFile(stateDir: string): string {
  const walk = (dir: string, depth: number): string | undefined => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        const found = walk(path, depth + 1);
        if (found) return found;
      } else if (depth > 0) return path;
    }
    return undefined;
  };
  return walk(stateDir, 0) ?? join(stateDir, 'host.key');
}

beforeAll(() => buildHost());

describe.each(MODES)('HOST_PLUGIN_ISOLATION=%s', (mode) => {
  let dataDir: string;
  let host: RunningHost;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), `host-isolation-${mode}-`));
    // Own users without a sandbox need to search the way to their package.
    chmodSync(dataDir, 0o711);
    host = await startHost(dataDir, { HOST_PLUGIN_ISOLATION: mode, HOST_PLUGIN_MEMORY_MB: '256', HOST_PLUGIN_MAX_PROCESSES: '64' });
    await install(host, 'com.example.bystander', []);
    writeFileSync(join(dataDir, 'plugin-data/com.example.bystander/data/secret.txt'), 'bystander secret');
  });

  afterAll(async () => {
    await host?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(`${dataDir}.admin-token`, { force: true });
  });

  it('says in the status and the log which mode each plugin runs in', async () => {
    const s = await status(host, 'com.example.bystander');
    expect(s.runtime.isolation).toMatchObject({ mode });
    expect(await logLine(host, 'com.example.bystander', 'isolation: ')).toMatch(mode === 'same-user' ? /host's user/ : /uid \d+/);
    expect(host.output()).toMatch(/plugin isolation: /);
  });

  it('keeps the hostile plugin from the host secrets and other plugins in the modes that promise it', async () => {
    const stateDir = join(dataDir, 'state');
    const reads = [
      `${dataDir}.admin-token`,
      join(stateDir, 'host.key'),
      databaseFile(stateDir),
      join(dataDir, 'plugin-data/com.example.bystander/data/secret.txt'),
    ];
    const writes = [
      join(dataDir, 'plugins-v2/com.example.hostile/plugin.mjs'),
      join(stateDir, 'planted'),
      join(dataDir, 'plugin-data/com.example.bystander/data/planted'),
    ];
    await install(
      host,
      'com.example.hostile',
      [
        'hostile',
        `--read=${reads.join(',')}`,
        `--write=${writes.join(',')}`,
        `--connect=127.0.0.1:${host.port}`,
        `--host-pid=${host.child.pid}`,
      ],
      'none',
    );
    const report = JSON.parse(await logLine(host, 'com.example.hostile', 'hostile-report=')) as Array<{
      what: string;
      ok: boolean;
      detail: string;
    }>;
    const worked = report.filter((a) => a.ok).map((a) => a.what);
    if (mode === 'sandbox') expect(worked).toEqual([]);
    if (mode === 'own-user') expect(worked).toEqual([`connect 127.0.0.1:${host.port}`]);
    // As the host's own user everything is open: the check above is not one that passes anyway.
    if (mode === 'same-user')
      expect(worked).toEqual(expect.arrayContaining([`read ${reads[0]}`, `read ${reads[1]}`, `write ${writes[1]}`]));
    expect(report).toHaveLength(reads.length + writes.length + 2);
    expect(await echoes(host, `after-hostile-${mode}`)).toBe(true);
  });

  it('runs the conformance suite of POST /api/plugins/{id}/doctor as it runs the plugin', async () => {
    const stateDir = join(dataDir, 'state');
    const id = 'com.example.doctor-hostile';
    const reads = [
      `${dataDir}.admin-token`,
      join(stateDir, 'host.key'),
      join(dataDir, 'plugin-data/com.example.bystander/data/secret.txt'),
    ];
    const args = ['hostile', '--exit-if-any-worked', `--read=${reads.join(',')}`, `--write=${join(stateDir, 'planted-by-doctor')}`];
    // Installed without a start: only the suite's processes run it.
    await install(host, id, [...args, `--host-pid=${host.child.pid}`], 'none', false);
    const r = await api(host, 'POST', `/api/plugins/${id}/doctor`);
    expect(r.status).toBe(200);
    const report = r.body.report;
    if (mode === 'same-user') {
      // The plugin read the host's secrets and said so: the suite's run is not one that passes anyway.
      expect(report.isolation).toMatch(/^the host's user/);
      expect(report.passed).toBe(false);
      expect(JSON.stringify(report)).toContain('hostile-worked=read');
    } else {
      const uid = JSON.parse(readFileSync(join(stateDir, 'plugin-uids.json'), 'utf8')).uids[id];
      expect(report.isolation).toMatch(new RegExp(`^${mode === 'sandbox' ? 'sandbox' : 'own user'} \\(uid ${uid}\\)`));
      expect({ passed: report.passed, failed: report.checks.filter((c: { status: string }) => c.status === 'fail') }).toEqual({
        passed: true,
        failed: [],
      });
    }
    expect(existsSync(join(stateDir, 'planted-by-doctor'))).toBe(mode === 'same-user');
    expect(await echoes(host, `after-doctor-${mode}`)).toBe(true);
  });

  if (mode !== 'same-user') {
    it('contains a fork bomb to the process limit', async () => {
      await install(host, 'com.example.forks', ['fork-bomb', '--forks=200']);
      const [, started] = /started=(\d+)/.exec(await logLine(host, 'com.example.forks', 'fork-bomb '))!;
      expect(Number(started)).toBeLessThan(64);
      expect(await echoes(host, `after-fork-bomb-${mode}`)).toBe(true);
    });

    it('kills a plugin past its memory limit, says so, and restarts it under the crash budget', async () => {
      await install(host, 'com.example.hog', ['allocate', '--allocate-mb=2048']);
      const deadline = Date.now() + 60_000;
      let s = await status(host, 'com.example.hog');
      while (s.runtime?.lastExitLimit !== 'memory' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        s = await status(host, 'com.example.hog');
      }
      expect(s.runtime.lastExitLimit).toBe('memory');
      expect(s.runtime.crashCount).toBeGreaterThanOrEqual(1);
      expect(`${s.runtime.stateReason} ${s.runtime.lastError}`).toMatch(/memory limit/);
      expect(await echoes(host, `after-hog-${mode}`)).toBe(true);
      await api(host, 'POST', '/api/plugins/com.example.hog/stop');
    });
  }
});

// The sandbox mounts the package itself, so a program of the package (as a Go plugin's executable) starts even
// where the data directory sits in a folder other users cannot search, which own users without a sandbox need.
(MODES.includes('sandbox') ? describe : describe.skip)('HOST_PLUGIN_ISOLATION=sandbox, a program of the package', () => {
  let work: string;
  let host: RunningHost;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'host-isolation-program-'));
    host = await startHost(join(work, 'data'), { HOST_PLUGIN_ISOLATION: 'sandbox' });
  });

  afterAll(async () => {
    await host?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('starts it from a data directory inside a folder of mode 0700, and it answers', async () => {
    expect(statSync(work).mode & 0o777).toBe(0o700);
    const manifest = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8')) as Record<string, unknown>;
    Object.assign(manifest, {
      pluginId: 'com.example.bystander',
      transport: {
        type: 'stdio-jsonrpc',
        stdio: { command: './start.sh', args: ['--host-stdio'], workingDirectory: '.', network: 'none' },
      },
    });
    const zip = buildZip([
      { name: 'manifest.json', data: JSON.stringify(manifest, null, 2) },
      { name: 'start.sh', data: '#!/bin/sh\nexec node plugin.mjs "$@"\n', unixMode: 0o100755 },
      { name: 'plugin.mjs', data: readFileSync(join(FIXTURE, 'plugin.mjs')) },
    ]);
    const r = await api(host, 'POST', '/api/plugins/packages', packageForm(zip, { startAfterInstall: 'true' }));
    expect(r.status).toBe(201);
    let s = await status(host, 'com.example.bystander');
    for (let i = 0; i < 200 && s.runtime?.state === 'starting'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      s = await status(host, 'com.example.bystander');
    }
    expect(s.runtime).toMatchObject({ state: 'running', isolation: { mode: 'sandbox' } });
    expect(await echoes(host, 'from-a-package-program')).toBe(true);
  });
});
