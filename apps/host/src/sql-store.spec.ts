import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import request from 'supertest';
import { hostPaths } from '@host/host-core';
import { DatabaseUnavailableError, ServerDatabase } from '@host/host-store';
import { startTestPostgres, type TestPostgres } from '@host/host-store/testing';
import { composeHost, type Host } from './compose';
import { sayAs, within } from './console.spec-helper';
import { buildZip } from '@host/host-installer/testing';
import AdmZip from 'adm-zip';
import { startBareHttpPlugin, stdioFixturePackage } from './fixture-plugins.spec-helper';

// The composed host on the SQL store: embedded in the data directory, and two hosts on one PostgreSQL server.
const TOKEN = 'sql-store-test-token-0123456789abcdef012';
const auth = { Authorization: `Bearer ${TOKEN}` };
const quiet = { log: () => undefined, httpHealthCheckMilliseconds: 0, runtimeTimings: { pingIntervalMilliseconds: 0 } };

const say = sayAs(TOKEN);

describe('composed host on the embedded SQL store', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'compose-sql-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('installs, answers, and after a restart has the plugin and the event log', async () => {
    const open = () => composeHost({ paths: hostPaths(dataDir), store: 'sql', adminToken: TOKEN, version: '0.0.0-test', ...quiet });
    const host = await open();
    try {
      const installed = await request(host.app)
        .post('/api/plugins/packages')
        .set(auth)
        .field('startAfterInstall', 'true')
        .attach('package', stdioFixturePackage('com.example.echo'), 'echo.zip');
      expect(installed.status).toBe(201);
      const first = await say(host, '/echo before the restart');
      expect(first.body.outbound).toEqual([expect.objectContaining({ pluginId: 'com.example.echo' })]);
    } finally {
      await host.close();
    }
    const again = await open();
    try {
      await again.startEnabledPlugins();
      const listed = await request(again.app).get('/api/plugins').set(auth);
      expect(listed.body.plugins).toEqual([expect.objectContaining({ pluginId: 'com.example.echo', state: 'running' })]);
      const events = await request(again.app).get('/api/events').set(auth);
      expect(JSON.stringify(events.body)).toContain('before the restart');
      expect((await say(again, '/echo after')).body.outbound).toEqual([expect.objectContaining({ pluginId: 'com.example.echo' })]);
    } finally {
      await again.close();
    }
  }, 120_000);
});

describe('admin app sessions on the embedded SQL store', () => {
  it('outlive a restart with the same admin token and end when the token changes', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'compose-sql-sessions-'));
    const logged: string[] = [];
    const open = (adminToken: string) =>
      composeHost({
        paths: hostPaths(dataDir),
        store: 'sql',
        adminToken,
        version: '0.0.0-test',
        ...quiet,
        log: (_level: string, m: string) => void logged.push(m),
      });
    try {
      let host = await open(TOKEN);
      const res = await request(host.app).post('/api/session').send({ token: TOKEN });
      expect(res.status).toBe(201);
      const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? [])[0]!.split(';')[0]!;
      await host.close();

      host = await open(TOKEN);
      await request(host.app).get('/api/plugins').set('Cookie', cookie).expect(200);
      await host.close();

      const other = 'sql-store-other-token-0123456789abcdef01';
      host = await open(other);
      try {
        const after = await request(host.app).get('/api/plugins').set('Cookie', cookie);
        expect({ status: after.status, code: after.body.error?.code }).toEqual({ status: 401, code: 'SESSION_EXPIRED' });
        expect(logged).toContain('the admin token changed: ended 1 admin app session begun with the old one');
      } finally {
        await host.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('composed host on a PostgreSQL server it cannot use', () => {
  it('does not start, naming the server without the password', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'compose-pg-down-'));
    try {
      const started = composeHost({
        paths: hostPaths(dir),
        store: 'sql',
        // Port 1 on loopback: nothing listens there.
        storeOptions: { databaseUrl: 'postgres://host@127.0.0.1:1/host', databasePassword: 'pw-not-shown' },
        adminToken: TOKEN,
        version: '0.0.0-test',
        ...quiet,
      });
      await expect(started).rejects.toThrow(DatabaseUnavailableError);
      await expect(started).rejects.toThrow(/^The host's database \(postgres:\/\/host@127\.0\.0\.1:1\/host\) cannot be used: /);
      await expect(started.catch((e: Error) => e.message)).resolves.not.toContain('pw-not-shown');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('two composed hosts on one PostgreSQL server', () => {
  let server: TestPostgres;
  let url: string;
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    server = await startTestPostgres();
    url = await server.createDatabase('two_hosts');
  }, 120_000);
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await server?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('share the registry: a plugin registered through one is listed and delivered to by the other within a second, also after a lost connection', async () => {
    const keyDir = mkdtempSync(join(tmpdir(), 'compose-pg-key-'));
    dirs.push(keyDir);
    const hostKeyFile = join(keyDir, 'host.key');
    writeFileSync(hostKeyFile, 'cd'.repeat(32) + '\n', { mode: 0o600 });
    const open = (replica: string) => {
      const dir = mkdtempSync(join(tmpdir(), `compose-pg-${replica}-`));
      dirs.push(dir);
      return composeHost({
        paths: hostPaths(dir),
        store: 'sql',
        storeOptions: { databaseUrl: url, hostKeyFile, replica },
        adminToken: TOKEN,
        version: '0.0.0-test',
        ...quiet,
      });
    };
    const a = await open('a');
    const b = await open('b');
    try {
      const secretFile = join(keyDir, 'bare-secret');
      writeFileSync(secretFile, '');
      const bare = await startBareHttpPlugin(secretFile);
      children.push(bare.child);
      const registered = await request(a.app).post('/api/plugins/http').set(auth).send({ baseUrl: bare.url });
      expect(registered.status).toBe(201);
      const fromB = await request(b.app).get('/api/plugins/com.example.bare-echo').set(auth);
      expect(fromB.status).toBe(200);
      expect(fromB.body.plugin).toMatchObject({ pluginId: 'com.example.bare-echo', transport: 'http' });
      const db = await ServerDatabase.open(url);
      try {
        const rows = JSON.stringify(await db.query('SELECT record FROM host_plugins'));
        expect(rows).toContain('com.example.bare-echo');
        expect(rows).not.toContain(registered.body.signingSecret);
        writeFileSync(secretFile, registered.body.signingSecret);

        // B delivers to the plugin registered through A within a second, and stops within a second of A disabling it.
        const deliveredBy = async (host: Host) =>
          ((await say(host, '/echo hi')).body.deliveries as { pluginId: string }[]).map((d) => d.pluginId);
        expect(
          await within(
            1000,
            () => deliveredBy(b),
            (ids) => ids.includes('com.example.bare-echo'),
          ),
        ).toEqual(['com.example.bare-echo']);
        expect((await request(a.app).post('/api/plugins/com.example.bare-echo/stop').set(auth)).status).toBe(200);
        expect(
          await within(
            1000,
            () => deliveredBy(b),
            (ids) => ids.length === 0,
          ),
        ).toEqual([]);

        // B's listening connection is cut: once it is made again, B reads everything again and misses nothing.
        await db.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%'");
        expect((await request(a.app).post('/api/plugins/com.example.bare-echo/start').set(auth)).status).toBe(200);
        expect(
          await within(
            10_000,
            () => deliveredBy(b),
            (ids) => ids.length === 1,
          ),
        ).toEqual(['com.example.bare-echo']);
      } finally {
        await db.close();
      }
    } finally {
      await a.close();
      await b.close();
    }
  }, 120_000);

  it('unpack a stdio package installed, updated or uninstalled through another host from the package store', async () => {
    const hostKeyFile = join(mkdtempSync(join(tmpdir(), 'compose-pg-key-')), 'host.key');
    dirs.push(dirname(hostKeyFile));
    writeFileSync(hostKeyFile, 'ef'.repeat(32) + '\n', { mode: 0o600 });
    const open = (replica: string, dir = mkdtempSync(join(tmpdir(), `compose-pg-pkg-${replica}-`))) => {
      dirs.push(dir);
      return composeHost({
        paths: hostPaths(dir),
        store: 'sql',
        storeOptions: { databaseUrl: url.replace(/two_hosts$/, 'packages'), hostKeyFile, replica },
        adminToken: TOKEN,
        version: '0.0.0-test',
        ...quiet,
      });
    };
    await server.createDatabase('packages');
    const a = await open('a');
    let b = await open('b');
    const id = 'com.example.shared-echo';
    const packageDirOfB = join(dirs.at(-1)!, 'plugins-v2', id);
    const versionOnB = () =>
      existsSync(join(packageDirOfB, 'manifest.json'))
        ? JSON.parse(readFileSync(join(packageDirOfB, 'manifest.json'), 'utf8')).version
        : undefined;
    try {
      const installed = await request(a.app).post('/api/plugins/packages').set(auth).attach('package', stdioFixturePackage(id), 'echo.zip');
      expect(installed.status).toBe(201);
      expect(
        await within(
          1000,
          async () => versionOnB(),
          (v) => v === '1.0.0',
        ),
      ).toBe('1.0.0');
      // B runs the package it unpacked, and answers.
      expect((await request(b.app).post(`/api/plugins/${id}/start`).set(auth)).body.plugin.state).toBe('running');
      expect((await say(b, '/echo from b')).body.outbound).toEqual([expect.objectContaining({ pluginId: id })]);

      const upload = await request(a.app)
        .post('/api/plugins/packages')
        .set(auth)
        .attach('package', withVersion(stdioFixturePackage(id), '1.1.0'), 'echo.zip');
      expect(upload.status).toBe(409);
      const confirmed = await request(a.app)
        .post(`/api/plugins/packages/pending/${upload.body.error.details.pendingUpdate.id}/confirm`)
        .set(auth)
        .send({});
      expect(confirmed.status).toBe(200);
      expect(
        await within(
          2000,
          async () => versionOnB(),
          (v) => v === '1.1.0',
        ),
      ).toBe('1.1.0');
      // B was running the old version: it runs the new one now.
      expect(
        await within(
          2000,
          async () => b.runtime.status(id)?.state,
          (s) => s === 'running',
        ),
      ).toBe('running');

      expect((await request(a.app).delete(`/api/plugins/${id}`).set(auth)).status).toBe(200);
      expect(
        await within(
          2000,
          async () => existsSync(packageDirOfB),
          (there) => !there,
        ),
      ).toBe(false);
      expect(b.runtime.isRunning(id)).toBe(false);

      // B is down while A installs, updates and uninstalls another plugin: B's next start neither brings the
      // uninstalled one back from its folder nor undoes the update with its old folder's manifest.
      const other = 'com.example.shared-two';
      expect(
        (await request(a.app).post('/api/plugins/packages').set(auth).attach('package', stdioFixturePackage(other), 'two.zip')).status,
      ).toBe(201);
      const dirOfB = dirname(dirname(packageDirOfB));
      await within(
        2000,
        async () => existsSync(join(dirOfB, 'plugins-v2', other)),
        (there) => there,
      );
      await b.close();
      const upload2 = await request(a.app)
        .post('/api/plugins/packages')
        .set(auth)
        .attach('package', withVersion(stdioFixturePackage(other), '2.0.0'), 'two.zip');
      await request(a.app).post(`/api/plugins/packages/pending/${upload2.body.error.details.pendingUpdate.id}/confirm`).set(auth).send({});
      b = await open('b', dirOfB);
      expect((await request(b.app).get(`/api/plugins/${other}`).set(auth)).body.plugin.version).toBe('2.0.0');
      expect(JSON.parse(readFileSync(join(dirOfB, 'plugins-v2', other, 'manifest.json'), 'utf8')).version).toBe('2.0.0');
      await b.close();
      expect((await request(a.app).delete(`/api/plugins/${other}`).set(auth)).status).toBe(200);
      b = await open('b', dirOfB);
      expect((await request(b.app).get(`/api/plugins/${other}`).set(auth)).status).toBe(404);
      expect(existsSync(join(dirOfB, 'plugins-v2', other))).toBe(false);
    } finally {
      await a.close();
      await b.close();
    }
  }, 120_000);
});

/** The same package with another version in its manifest. */
function withVersion(zip: Buffer, version: string): Buffer {
  const entries = new AdmZip(zip).getEntries().map((e) => ({ name: e.entryName, data: e.getData() }));
  return buildZip(
    entries.map((e) =>
      e.name === 'manifest.json' ? { name: e.name, data: JSON.stringify({ ...JSON.parse(e.data.toString('utf8')), version }) } : e,
    ),
  );
}
