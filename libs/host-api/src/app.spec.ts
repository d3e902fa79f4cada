import { hostPaths, type HostPaths } from '@host/host-core';
import { PluginInstaller, type InstallStep } from '@host/host-installer';
import { snapshotTree, testManifest, testPackage, buildZip, createUnavailableRuntime } from '@host/host-installer/testing';
import { FilePluginLogStore } from '@host/host-runtime';
import { FilePendingUpdateStore, FileSettingsStore, JsonRegistryStore } from '@host/host-store';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import { createApp, type AppDeps } from './app';
import { ensureAdminToken } from './auth';
import {
  ErrorBodySchema,
  HealthResponseSchema,
  ReadyResponseSchema,
  InstallResponseSchema,
  PluginListResponseSchema,
  PluginResponseSchema,
  SettingsResponseSchema,
} from '@host/admin-api';

const ID = 'com.example.echo';
const pkg = (version: string, extra: Record<string, unknown> = {}) =>
  testPackage({ manifest: testManifest({ version, ...extra }), indexJs: `// v${version}\n` });

interface Harness {
  app: Express;
  token: string;
  paths: HostPaths;
  store: JsonRegistryStore;
  installer: PluginInstaller;
  /** Makes the installer fail after this step from now on. */
  failAt(step: InstallStep): void;
}

describe('admin API', () => {
  let dataDir: string;
  const cleanups: (() => Promise<void>)[] = [];

  async function harness(options: { extra?: Partial<AppDeps> } = {}): Promise<Harness> {
    const paths = hostPaths(dataDir);
    const store = await JsonRegistryStore.open(paths.stateDir);
    let failAt: InstallStep | undefined;
    const installer = new PluginInstaller({
      paths,
      store,
      pendingUpdates: new FilePendingUpdateStore(join(paths.stateDir, 'pending')),
      runtime: createUnavailableRuntime(),
      onStep: (s) => {
        if (s === failAt) throw new Error(`forced failure at ${s}`);
      },
    });
    await installer.init();
    const { hash, generated } = await ensureAdminToken(store);
    cleanups.push(() => store.close());
    const app = createApp({
      paths,
      store,
      settings: new FileSettingsStore(paths),
      installer,
      runtime: createUnavailableRuntime(),
      adminTokenHash: hash,
      version: '1.2.3',
      ...options.extra,
    });
    return { app, token: generated!, paths, store, installer, failAt: (s) => (failAt = s) };
  }

  const upload = (h: Harness, zip: Buffer, fields: Record<string, string> = {}) => {
    let r = request(h.app).post('/api/plugins/packages').set('Authorization', `Bearer ${h.token}`);
    for (const [k, v] of Object.entries(fields)) r = r.field(k, v);
    return r.attach('package', zip, 'plugin.zip');
  };
  const authed = (h: Harness, method: 'get' | 'post' | 'put' | 'delete', path: string) =>
    request(h.app)[method](path).set('Authorization', `Bearer ${h.token}`);
  const expectError = (res: request.Response, status: number, code: string) => {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    expect(ErrorBodySchema.safeParse(res.body).success).toBe(true);
    expect(res.body.error.message.length).toBeGreaterThan(10);
  };

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'api-'));
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers health without a token', async () => {
    const h = await harness();
    const res = await request(h.app).get('/api/health');
    expect(res.status).toBe(200);
    expect(HealthResponseSchema.parse(res.body)).toMatchObject({ status: 'ok', version: '1.2.3' });
  });

  it('answers readiness without a token, apart from health: ready, with a store that has no server to lose', async () => {
    const h = await harness();
    const res = await request(h.app).get('/api/ready');
    expect(res.status).toBe(200);
    expect(ReadyResponseSchema.parse(res.body)).toEqual({ status: 'ready', store: 'local' });
  });

  it('states in health the protocol and SDK versions of the one version source', async () => {
    const h = await harness();
    const res = await request(h.app).get('/api/health');
    const versions = JSON.parse(readFileSync(join(__dirname, '../../protocol/src/versions.json'), 'utf8'));
    expect(res.body).toMatchObject({
      protocolVersion: versions.protocolVersion,
      sdkVersion: versions.sdkVersion,
      supportedSdkVersions: versions.supportedSdkVersions,
    });
  });

  it.each([
    ['no Authorization header', undefined],
    ['a wrong token', 'Bearer not-the-token-at-all'],
    ['another scheme', 'Basic YWRtaW46YWRtaW4='],
    ['an empty bearer', 'Bearer '],
  ])('refuses %s with 401 on every other route', async (_label, header) => {
    const h = await harness();
    for (const [method, path] of [
      ['get', '/api/plugins'],
      ['get', `/api/plugins/${ID}`],
      ['post', '/api/plugins/packages'],
      ['post', `/api/plugins/${ID}/start`],
      ['delete', `/api/plugins/${ID}/data`],
      ['get', '/api/openapi.json'],
      ['get', '/api/no-such-route'],
    ] as const) {
      let r = request(h.app)[method](path);
      if (header !== undefined) r = r.set('Authorization', header);
      const res = await r;
      expectError(res, 401, 'UNAUTHORIZED');
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('installs an upload (201), lists it and shows its details', async () => {
    const h = await harness();
    const res = await upload(h, pkg('1.0.0'));
    expect(res.status).toBe(201);
    const body = InstallResponseSchema.parse(res.body);
    expect(body.plugin).toMatchObject({ pluginId: ID, version: '1.0.0', transport: 'stdio-jsonrpc', state: 'installed' });
    expect(existsSync(join(h.paths.packageDir(ID), 'manifest.json'))).toBe(true);
    const list = PluginListResponseSchema.parse((await authed(h, 'get', '/api/plugins')).body);
    expect(list.plugins.map((p) => [p.pluginId, p.state])).toEqual([[ID, 'installed']]);
    const detail = PluginResponseSchema.parse((await authed(h, 'get', `/api/plugins/${ID}`)).body);
    expect(detail.plugin.locations?.package).toBe(`plugins-v2/${ID}`);
    expectError(await authed(h, 'get', '/api/plugins/com.example.none'), 404, 'PLUGIN_NOT_FOUND');
    // Malformed percent-encoding is the client's mistake, not a server failure.
    expectError(await authed(h, 'get', '/api/plugins/%E0%A4%A'), 400, 'BAD_REQUEST');
  });

  it('reports a command two plugins both answer in the install answer, the list and the details, naming the winner', async () => {
    const h = await harness();
    const roll = { commands: [{ name: 'roll', prefixes: ['/'] }] };
    const first = await upload(h, testPackage({ manifest: testManifest({ pluginId: 'com.b.dice', ...roll }) }));
    expect(InstallResponseSchema.parse(first.body).plugin.commandConflicts).toBeUndefined();
    const res = await upload(h, testPackage({ manifest: testManifest({ pluginId: 'com.a.dice', ...roll }) }));
    expect(res.status).toBe(201);
    const clash = { command: 'roll', prefix: '/', word: 'roll', otherCommand: 'roll', winner: 'com.a.dice' };
    expect(InstallResponseSchema.parse(res.body).plugin.commandConflicts).toEqual([
      expect.objectContaining({ ...clash, otherPluginId: 'com.b.dice' }),
    ]);
    const list = PluginListResponseSchema.parse((await authed(h, 'get', '/api/plugins')).body);
    expect(list.plugins.map((p) => [p.pluginId, p.commandConflicts?.map((c) => c.otherPluginId)])).toEqual([
      ['com.a.dice', ['com.b.dice']],
      ['com.b.dice', ['com.a.dice']],
    ]);
    const detail = PluginResponseSchema.parse((await authed(h, 'get', '/api/plugins/com.b.dice')).body);
    expect(detail.plugin.commandConflicts).toEqual([expect.objectContaining({ ...clash, otherPluginId: 'com.a.dice' })]);
  });

  it('warns in the install answer when the start arguments lack --host-stdio', async () => {
    const h = await harness();
    const transport = { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['index.js'], workingDirectory: '.' } };
    const res = await upload(h, testPackage({ manifest: testManifest({ transport }) }));
    expect(res.status).toBe(201);
    expect(InstallResponseSchema.parse(res.body).warnings).toEqual([expect.stringContaining('add "--host-stdio" to transport.stdio.args')]);
    const ok = await upload(h, testPackage({ manifest: testManifest({ pluginId: 'com.example.other' }) }));
    expect(InstallResponseSchema.parse(ok.body).warnings).toBeUndefined();
  });

  it('reports that the runtime is not available yet for start, stop, restart and startAfterInstall', async () => {
    const h = await harness();
    const res = await upload(h, pkg('1.0.0'), { startAfterInstall: 'true' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ started: false, startError: { code: 'RUNTIME_UNAVAILABLE' } });
    for (const action of ['start', 'stop', 'restart'])
      expectError(await authed(h, 'post', `/api/plugins/${ID}/${action}`), 503, 'RUNTIME_UNAVAILABLE');
  });

  it('refuses bad uploads with their codes and writes nothing', async () => {
    const h = await harness();
    const before = snapshotTree(dataDir);
    expectError(await authed(h, 'post', '/api/plugins/packages').field('startAfterInstall', 'true'), 400, 'INSTALL_NO_FILE');
    expectError(await upload(h, buildZip([{ name: '../../evil.js', data: 'x' }])), 422, 'INSTALL_PATH_TRAVERSAL');
    expectError(await upload(h, Buffer.from('not a zip')), 400, 'INSTALL_NOT_A_ZIP');
    expectError(await upload(h, pkg('1.0.0'), { startAfterInstall: 'yes' }), 400, 'BAD_REQUEST');
    const wrongField = await authed(h, 'post', '/api/plugins/packages').attach('file', pkg('1.0.0'), 'plugin.zip');
    expectError(wrongField, 400, 'BAD_REQUEST');
    expect(snapshotTree(dataDir)).toEqual(before);
  });

  it('answers 413 naming the limit when the upload is too large', async () => {
    const h = await harness({ extra: { maxUploadBytes: 2048 } });
    const big = testPackage({
      extra: [{ name: 'blob.bin', data: Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 7919) % 251)), method: 0 }],
    });
    const res = await upload(h, big);
    expectError(res, 413, 'INSTALL_UPLOAD_TOO_LARGE');
    expect(res.body.error.message).toContain('2048 bytes');
    expect(res.body.error.message).toContain('HOST_MAX_UPLOAD_BYTES');
    expect(res.body.error.details).toEqual({ limit: 2048, setting: 'HOST_MAX_UPLOAD_BYTES' });
  });

  it('runs the update flow: 409 with details, cancel, confirm, backup, data kept', async () => {
    const h = await harness();
    await upload(h, pkg('1.0.0'));
    writeFileSync(join(h.paths.dataDirOf(ID), 'db.json'), '{"count": 41}');

    const first = await upload(h, pkg('2.0.0', { permissions: ['messages.reply', 'messages.send'] }));
    expectError(first, 409, 'UPDATE_CONFIRMATION_REQUIRED');
    const pending = first.body.pendingUpdate;
    expect(first.body.error.details.pendingUpdate).toEqual(pending);
    expect(pending).toMatchObject({
      pluginId: ID,
      installed: { version: '1.0.0', name: 'Echo', author: 'Example', sdkVersion: '2.0.0', startCommand: { command: 'node' } },
      incoming: { version: '2.0.0' },
      changes: { permissionsAdded: ['messages.send'], permissionsRemoved: [] },
    });
    expect((await authed(h, 'get', `/api/plugins/packages/pending/${pending.id}`)).body.pendingUpdate.id).toBe(pending.id);
    expect((await authed(h, 'delete', `/api/plugins/packages/pending/${pending.id}`)).body).toEqual({ cancelled: pending.id });
    expectError(await authed(h, 'post', `/api/plugins/packages/pending/${pending.id}/confirm`).send({}), 404, 'PENDING_UPDATE_NOT_FOUND');

    const second = (await upload(h, pkg('2.0.0'))).body.pendingUpdate;
    expectError(await authed(h, 'post', `/api/plugins/packages/pending/${second.id}/confirm`).send({ start: true }), 400, 'BAD_REQUEST');
    const confirmed = await authed(h, 'post', `/api/plugins/packages/pending/${second.id}/confirm`).send({});
    expect(confirmed.status).toBe(200);
    const body = InstallResponseSchema.parse(confirmed.body);
    expect(body.plugin.version).toBe('2.0.0');
    expect(body.backup).toMatch(new RegExp(`^backups/${ID.replace(/\./g, '\\.')}/\\d{8}T\\d{9}Z-1\\.0\\.0$`));
    expect(readFileSync(join(dataDir, body.backup!, 'index.js'), 'utf8')).toBe('// v1.0.0\n');
    expect(body.plugin.backups.map((b) => b.version)).toEqual(['1.0.0']);
    expect(readFileSync(join(h.paths.dataDirOf(ID), 'db.json'), 'utf8')).toBe('{"count": 41}');
  });

  it('restores the backup when a confirmed update fails part-way', async () => {
    const h = await harness();
    await upload(h, pkg('1.0.0'));
    h.failAt('new-moved');
    const before = snapshotTree(h.paths.packagesRoot);
    const pending = (await upload(h, pkg('2.0.0'))).body.pendingUpdate;
    const res = await authed(h, 'post', `/api/plugins/packages/pending/${pending.id}/confirm`).send({});
    expectError(res, 500, 'INSTALL_FAILED');
    expect(res.body.error.details).toMatchObject({ restored: true });
    expect(snapshotTree(h.paths.packagesRoot)).toEqual(before);
    expect((await authed(h, 'get', `/api/plugins/${ID}`)).body.plugin.version).toBe('1.0.0');
  });

  it('uninstalls keeping data, then deletes data on request', async () => {
    const h = await harness();
    await upload(h, pkg('1.0.0'));
    writeFileSync(join(h.paths.dataDirOf(ID), 'db.json'), '{}');
    const res = await authed(h, 'delete', `/api/plugins/${ID}`);
    expect(res.status).toBe(200);
    expect(res.body.uninstalled).toBe(ID);
    expect(existsSync(join(dataDir, res.body.backup, 'manifest.json'))).toBe(true);
    expect(existsSync(h.paths.packageDir(ID))).toBe(false);
    expect(existsSync(join(h.paths.dataDirOf(ID), 'db.json'))).toBe(true);
    expect((await authed(h, 'get', '/api/plugins')).body.plugins).toEqual([]);
    expect((await authed(h, 'delete', `/api/plugins/${ID}/data`)).body).toEqual({ deleted: ID });
    expect(existsSync(join(dataDir, 'plugin-data', ID))).toBe(false);
    expectError(await authed(h, 'delete', `/api/plugins/${ID}/data`), 404, 'PLUGIN_NOT_FOUND');
  });

  it('lists invalid packages found on disk with their issues', async () => {
    mkdirSync(join(dataDir, 'plugins-v2', 'com.example.broken'), { recursive: true });
    writeFileSync(join(dataDir, 'plugins-v2', 'com.example.broken', 'manifest.json'), '{ not json');
    const h = await harness();
    const list = PluginListResponseSchema.parse((await authed(h, 'get', '/api/plugins')).body);
    expect(list.plugins).toEqual([
      {
        pluginId: 'com.example.broken',
        transport: 'stdio-jsonrpc',
        state: 'invalidManifest',
        enabled: false,
        issues: [expect.objectContaining({ code: 'manifest.json.invalid' })],
      },
    ]);
    expectError(await authed(h, 'post', '/api/plugins/com.example.broken/start'), 404, 'PLUGIN_NOT_FOUND');
  });

  it('restores a kept version through the update flow: its dialog data first, then the confirmed downgrade', async () => {
    const h = await harness();
    await upload(h, pkg('1.0.0'));
    const pending = (await upload(h, pkg('1.1.0'))).body.pendingUpdate;
    expect((await authed(h, 'post', `/api/plugins/packages/pending/${pending.id}/confirm`).send({})).status).toBe(200);
    const [backup] = (await authed(h, 'get', `/api/plugins/${ID}`)).body.plugin.backups;
    expect(backup).toMatchObject({ version: '1.0.0' });

    const restore = await authed(h, 'post', `/api/plugins/${ID}/backups/${encodeURIComponent(backup.name)}/restore`);
    expectError(restore, 409, 'UPDATE_CONFIRMATION_REQUIRED');
    expect(restore.body.pendingUpdate).toMatchObject({
      installed: { version: '1.1.0' },
      incoming: { version: '1.0.0' },
      changes: { versionOrder: 'downgrade' },
    });
    const done = await authed(h, 'post', `/api/plugins/packages/pending/${restore.body.pendingUpdate.id}/confirm`).send({});
    expect(done.status).toBe(200);
    expect((await authed(h, 'get', `/api/plugins/${ID}`)).body.plugin.version).toBe('1.0.0');
    expect(readFileSync(join(h.paths.packageDir(ID), 'index.js'), 'utf8')).toBe('// v1.0.0\n');

    expectError(await authed(h, 'post', `/api/plugins/${ID}/backups/no-such-backup/restore`), 404, 'BACKUP_NOT_FOUND');
    expectError(await authed(h, 'post', `/api/plugins/${ID}/backups/..%2F..%2Fstate/restore`), 404, 'BACKUP_NOT_FOUND');
    expectError(await authed(h, 'post', '/api/plugins/not%20an%20id/backups/x/restore'), 404, 'PLUGIN_NOT_FOUND');
  });

  it('keeps the previous settings when the running plugin refuses new ones, and answers SETTINGS_REFUSED with its reason', async () => {
    // The runtime answers as it does for a plugin whose settings.changed failed (libs/host-runtime supervisor.spec.ts runs a real one).
    let refuse = true;
    const runtime = {
      ...createUnavailableRuntime(),
      applySettings: async (id: string) =>
        refuse
          ? { status: 'refused' as const, message: `${id} refused the new settings: units must be metric`, reason: 'units must be metric' }
          : { status: 'live' as const, message: `${id} took the new settings while running.` },
    };
    const h = await harness({ extra: { runtime } });
    const settings = { configSchema: { greeting: { type: 'string', label: 'Greeting' }, units: { type: 'string', label: 'Units' } } };
    await upload(h, pkg('1.0.0', { settings }));
    const path = `/api/plugins/${ID}/settings`;
    refuse = false;
    expect((await authed(h, 'put', path).send({ values: { greeting: 'hi', units: 'metric' } })).status).toBe(200);
    refuse = true;
    const refused = await authed(h, 'put', path).send({ values: { units: 'kelvin' } });
    expectError(refused, 422, 'SETTINGS_REFUSED');
    expect(refused.body.error.details).toEqual({ pluginId: ID, reason: 'units must be metric' });
    expect(refused.body.error.message).toContain('units must be metric');
    // What the plugin refused is not stored: a restart could not apply it.
    expect((await authed(h, 'get', path)).body.values).toEqual({ greeting: 'hi', units: 'metric' });
    expect(JSON.parse(readFileSync(join(h.paths.configDirOf(ID), 'settings.json'), 'utf8'))).toEqual({
      values: { greeting: 'hi', units: 'metric' },
    });
  });

  it('keeps settings valid, never returns secrets, and keeps a secret saved blank', async () => {
    const h = await harness();
    const settings = {
      configSchema: {
        apiKey: { type: 'secret', label: 'API key', required: true },
        mode: { type: 'select', label: 'Mode', options: [{ value: 'fast' }, { value: 'safe' }], defaultValue: 'safe' },
        limit: { type: 'number', label: 'Limit', min: 1, max: 10 },
      },
    };
    await upload(h, pkg('1.0.0', { settings }));
    const path = `/api/plugins/${ID}/settings`;
    const initial = SettingsResponseSchema.parse((await authed(h, 'get', path)).body);
    expect(initial.values).toEqual({ apiKey: { set: false }, mode: 'safe', limit: null });

    const missing = await authed(h, 'put', path).send({ values: { mode: 'fast' } });
    expectError(missing, 422, 'SETTINGS_INVALID');
    expect(missing.body.error.details.issues.map((i: { path: string }) => i.path)).toEqual(['apiKey']);

    const wrong = await authed(h, 'put', path).send({ values: { apiKey: 'k', mode: 'turbo', limit: 99, colour: 'red' } });
    expectError(wrong, 422, 'SETTINGS_INVALID');
    expect(wrong.body.error.details.issues.map((i: { path: string }) => i.path).sort()).toEqual(['colour', 'limit', 'mode']);

    const saved = await authed(h, 'put', path).send({ values: { apiKey: 's3cret-value', mode: 'fast', limit: 3 } });
    expect(saved.status).toBe(200);
    expect(saved.body.values).toEqual({ apiKey: { set: true }, mode: 'fast', limit: 3 });
    // Not running: the values reach the plugin when it starts, and the answer says so.
    expect(saved.body.delivery).toEqual({ status: 'nextStart', message: expect.stringContaining('when it starts') });
    expect(JSON.stringify(saved.body)).not.toContain('s3cret-value');
    expect(JSON.stringify((await authed(h, 'get', path)).body)).not.toContain('s3cret-value');

    const blank = await authed(h, 'put', path).send({ values: { apiKey: '', limit: null } });
    expect(blank.body.values).toEqual({ apiKey: { set: true }, mode: 'fast', limit: null });
    const file = JSON.parse(readFileSync(join(h.paths.configDirOf(ID), 'settings.json'), 'utf8'));
    expect(file).toEqual({ values: { apiKey: 's3cret-value', mode: 'fast' } });
    expectError(await authed(h, 'put', path).send({ nope: 1 }), 400, 'BAD_REQUEST');
    expectError(await authed(h, 'put', path).set('Content-Type', 'application/json').send('{"values": '), 400, 'BAD_REQUEST');
    // Nested beyond the JSON limits: refused before parsing, with its own code, and the settings stay as they were.
    const deep = `{"values":{"mode":${'['.repeat(6000)}${']'.repeat(6000)}}}`;
    expectError(await authed(h, 'put', path).set('Content-Type', 'application/json').send(deep), 400, 'REQUEST_JSON_TOO_COMPLEX');
    expect((await authed(h, 'get', path)).body.values).toEqual({ apiKey: { set: true }, mode: 'fast', limit: null });

    // Settings survive an update.
    const p = (await upload(h, pkg('1.1.0', { settings }))).body.pendingUpdate;
    await authed(h, 'post', `/api/plugins/packages/pending/${p.id}/confirm`).send({});
    expect((await authed(h, 'get', path)).body.values).toEqual({ apiKey: { set: true }, mode: 'fast', limit: null });
  });

  it('tails plugin logs from the log store', async () => {
    const logs = new FilePluginLogStore(hostPaths(dataDir));
    const h = await harness({ extra: { logs } });
    await upload(h, pkg('1.0.0'));
    for (let i = 0; i < 5; i++) logs.append(ID, { at: new Date().toISOString(), stream: 'stderr', level: 'info', message: `line ${i}` });
    await logs.flush();
    const res = await authed(h, 'get', `/api/plugins/${ID}/logs?tail=2`);
    expect(res.status).toBe(200);
    expect(res.body.lines.map((l: { message: string }) => l.message)).toEqual(['line 3', 'line 4']);
    expectError(await authed(h, 'get', `/api/plugins/${ID}/logs?tail=0`), 400, 'BAD_REQUEST');
    expectError(await authed(h, 'get', '/api/plugins/com.example.none/logs'), 404, 'PLUGIN_NOT_FOUND');
  });

  it('answers JSON 404 for unknown routes', async () => {
    const h = await harness();
    expectError(await authed(h, 'get', '/api/nothing-here'), 404, 'NOT_FOUND');
    expectError(await request(h.app).get('/nothing-here'), 404, 'NOT_FOUND');
  });

  it('tells browsers not to sniff the type of any answer: successes, errors, refusals before authentication', async () => {
    const h = await harness();
    const answers = [
      await authed(h, 'get', '/api/plugins'),
      await authed(h, 'get', '/api/nothing-here'),
      await request(h.app).get('/api/plugins'),
      await request(h.app).get('/nothing-here'),
      await authed(h, 'put', `/api/plugins/${ID}/settings`).set('Content-Type', 'application/json').send('{"values": '),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 404, 401, 404, expect.any(Number)]);
    for (const r of answers) expect(r.headers['x-content-type-options']).toBe('nosniff');
  });

  it('publishes an OpenAPI 3.1 document covering every route with its error codes', async () => {
    const h = await harness();
    const doc = (await authed(h, 'get', '/api/openapi.json')).body;
    expect(doc.openapi).toBe('3.1.0');
    const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, m]) =>
      Object.keys(m).map((k) => `${k.toUpperCase()} ${p}`),
    );
    expect(ops.sort()).toEqual(
      [
        'GET /api/health',
        'GET /api/ready',
        'GET /api/openapi.json',
        'GET /api/plugins',
        'GET /api/plugins/{pluginId}',
        'POST /api/plugins/packages',
        'GET /api/plugins/packages/pending/{id}',
        'POST /api/plugins/packages/pending/{id}/confirm',
        'DELETE /api/plugins/packages/pending/{id}',
        'POST /api/plugins/{pluginId}/backups/{name}/restore',
        'POST /api/plugins/{pluginId}/start',
        'POST /api/plugins/{pluginId}/stop',
        'POST /api/plugins/{pluginId}/restart',
        'DELETE /api/plugins/{pluginId}',
        'DELETE /api/plugins/{pluginId}/data',
        'GET /api/plugins/{pluginId}/logs',
        'GET /api/plugins/{pluginId}/logs/stream',
        'GET /api/plugins/{pluginId}/settings',
        'PUT /api/plugins/{pluginId}/settings',
        'POST /api/plugins/{pluginId}/doctor',
        'GET /api/plugins/{pluginId}/doctor',
        'POST /api/session',
        'GET /api/session',
        'DELETE /api/session',
      ].sort(),
    );
    const uploadOp = doc.paths['/api/plugins/packages'].post;
    expect(uploadOp.requestBody.content['multipart/form-data'].schema.properties.package).toEqual(
      expect.objectContaining({ format: 'binary' }),
    );
    expect(uploadOp.responses['422'].content['application/json'].schema['x-error-codes']).toContain('INSTALL_PATH_TRAVERSAL');
    expect(uploadOp.responses['409'].content['application/json'].schema['x-error-codes']).toContain('UPDATE_CONFIRMATION_REQUIRED');
    expect(uploadOp.responses['413'].content['application/json'].schema['x-error-codes']).toEqual(['INSTALL_UPLOAD_TOO_LARGE']);
    expect(doc.paths['/api/health'].get.security).toEqual([]);
    expect(doc.paths['/api/ready'].get.security).toEqual([]);
    expect(doc.paths['/api/ready'].get.responses['503'].content['application/json'].schema['x-error-codes']).toEqual(['STORE_UNAVAILABLE']);
    expect(doc.paths['/api/plugins'].get.responses['503'].content['application/json'].schema['x-error-codes']).toContain(
      'STORE_UNAVAILABLE',
    );
    expect(doc.paths['/api/session'].post.security).toEqual([]);
    expect(doc.paths['/api/plugins'].get.security).toEqual([{ adminToken: [] }, { adminSession: [] }]);
    expect(doc.paths['/api/plugins/{pluginId}/start'].post.responses['403'].content['application/json'].schema['x-error-codes']).toEqual([
      'CSRF_TOKEN_INVALID',
      'ORIGIN_REFUSED',
    ]);
    expect(doc.paths['/api/plugins/{pluginId}/logs'].get.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'tail', in: 'query' }),
        expect.objectContaining({ name: 'pluginId', in: 'path' }),
      ]),
    );
  });
});
