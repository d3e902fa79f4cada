import { testManifest, testPackage } from '@host/host-installer/testing';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { adminTokenFile, api, buildHost, packageForm, runHostOnce, startHost, type RunningHost } from '@host/e2e-support';

const ID = 'com.example.echo';

/** The files under `dir` whose bytes contain `text`. */
function filesContaining(dir: string, text: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return filesContaining(p, text);
    return readFileSync(p).includes(text) ? [p] : [];
  });
}

describe('the built host process', () => {
  let dataDir: string;
  const running: RunningHost[] = [];
  beforeAll(() => buildHost());
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'host-e2e-'));
  });
  afterEach(async () => {
    for (const h of running.splice(0)) await h.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints what is wrong and exits non-zero on a configuration error', () => {
    const r = runHostOnce(['--port', 'http'], { HOST_DATA_DIR: dataDir, HOST_MAX_UPLOAD_BYTES: 'lots' });
    expect(r.status).toBe(2);
    expect(r.output).toContain('--port must be a number (got "http")');
    expect(r.output).toContain('HOST_MAX_UPLOAD_BYTES must be a number of bytes');
    expect(existsSync(join(dataDir, 'state'))).toBe(false);
  });

  it('names the setting to change when its port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const { port } = blocker.address() as AddressInfo;
    try {
      const r = runHostOnce(['--port', String(port)], { HOST_DATA_DIR: dataDir, HOST_ADMIN_TOKEN_FILE: adminTokenFile(dataDir) });
      expect(r.status).toBe(1);
      expect(r.output).toContain(`127.0.0.1:${port} is already in use (EADDRINUSE)`);
      expect(r.output).toMatch(/HOST_PORT or --port/);
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });

  it('generates the admin token on first start, prints it once, and stores only its hash', async () => {
    const first = await startHost(dataDir, { HOST_ADMIN_TOKEN_FILE: '' });
    running.push(first);
    const token = /Admin token: (\S+)/.exec(first.output())?.[1];
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Nowhere in the state directory (the embedded database's files included).
    expect(filesContaining(join(dataDir, 'state'), token!)).toEqual([]);
    const ok = await fetch(`${first.url}/api/plugins`, { headers: { authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    expect((await fetch(`${first.url}/api/plugins`)).status).toBe(401);
    expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    // The lock is released on a graceful stop; the second start reuses the stored hash and prints no token.
    expect(existsSync(join(dataDir, 'state', 'host.lock'))).toBe(false);
    const second = await startHost(dataDir, { HOST_ADMIN_TOKEN_FILE: '' });
    running.push(second);
    expect(second.output()).not.toContain('Admin token');
    expect((await fetch(`${second.url}/api/plugins`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  });

  it('imports a data directory the file store used into the embedded database on its first start with the default store', async () => {
    const before = await startHost(dataDir, { HOST_STORE: 'file' });
    running.push(before);
    const v1 = testPackage({ folder: ID, manifest: testManifest({ version: '1.0.0' }), indexJs: '// one\n' });
    expect((await api(before, 'POST', '/api/plugins/packages', packageForm(v1))).status).toBe(201);
    const sent = await api(before, 'POST', '/api/console/messages', {
      conversation: { type: 'group', id: 'g1' },
      sender: { id: 'u1', displayName: 'Ann' },
      text: 'kept across the move',
    });
    expect(sent.status).toBe(200);
    expect(await before.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    const registryFile = readFileSync(join(dataDir, 'state', 'registry.json'), 'utf8');
    expect(existsSync(join(dataDir, 'state', 'db'))).toBe(false);

    // No HOST_STORE: the embedded SQL store, which finds the files and imports them once.
    const after = await startHost(dataDir);
    running.push(after);
    expect(after.output()).toContain('store: embedded database in');
    expect(after.output()).toMatch(
      /imported the data directory's files into the store: 1 plugins, \d+ settings, 0 pending updates, [1-9]\d* events/,
    );
    const list = await api(after, 'GET', '/api/plugins');
    expect(list.status).toBe(200); // the admin token's hash came with the registry's metadata
    expect(list.body.plugins.map((p: { pluginId: string; version: string }) => `${p.pluginId}@${p.version}`)).toEqual([`${ID}@1.0.0`]);
    const events = await api(after, 'GET', '/api/events');
    expect(JSON.stringify(events.body)).toContain(sent.body.eventId);
    expect(existsSync(join(dataDir, 'state', 'db', 'PG_VERSION'))).toBe(true);
    // The files are left as they were (HOST_STORE=file finds them unchanged).
    expect(readFileSync(join(dataDir, 'state', 'registry.json'), 'utf8')).toBe(registryFile);
    expect(await after.stop('SIGTERM')).toEqual({ code: 0, signal: null });

    const again = await startHost(dataDir);
    running.push(again);
    expect(again.output()).not.toContain('imported');
    expect((await api(again, 'GET', '/api/plugins')).body.plugins).toHaveLength(1);
  });

  it('refuses a second host on the same data directory', async () => {
    running.push(await startHost(dataDir));
    const r = runHostOnce([], { HOST_DATA_DIR: dataDir, HOST_PORT: '0', HOST_ADMIN_TOKEN_FILE: adminTokenFile(dataDir) });
    expect(r.status).toBe(1);
    expect(r.output).toContain('in use by another host process');
  });

  it('installs, updates with confirmation and keeps data, over HTTP, like an operator with curl', async () => {
    const host = await startHost(dataDir);
    running.push(host);
    const v1 = testPackage({ folder: ID, manifest: testManifest({ version: '1.0.0' }), indexJs: '// one\n' });
    const installed = await api(host, 'POST', '/api/plugins/packages', packageForm(v1));
    expect(installed.status).toBe(201);
    expect(readFileSync(join(dataDir, 'plugins-v2', ID, 'index.js'), 'utf8')).toBe('// one\n');
    writeFileSync(join(dataDir, 'plugin-data', ID, 'data', 'notes.txt'), 'keep me');

    const v2 = testPackage({ manifest: testManifest({ version: '2.0.0', permissions: [] }), indexJs: '// two\n' });
    const conflict = await api(host, 'POST', '/api/plugins/packages', packageForm(v2));
    expect(conflict.status).toBe(409);
    expect(conflict.body.pendingUpdate.changes.permissionsRemoved).toEqual(['messages.reply']);
    const confirmed = await api(host, 'POST', `/api/plugins/packages/pending/${conflict.body.pendingUpdate.id}/confirm`, {});
    expect(confirmed.status).toBe(200);
    expect(readFileSync(join(dataDir, 'plugins-v2', ID, 'index.js'), 'utf8')).toBe('// two\n');
    expect(readFileSync(join(dataDir, confirmed.body.backup, 'index.js'), 'utf8')).toBe('// one\n');
    expect(readFileSync(join(dataDir, 'plugin-data', ID, 'data', 'notes.txt'), 'utf8')).toBe('keep me');
    const list = await api(host, 'GET', '/api/plugins');
    expect(list.body.plugins.map((p: { pluginId: string; version: string }) => `${p.pluginId}@${p.version}`)).toEqual([`${ID}@2.0.0`]);
  });
});
