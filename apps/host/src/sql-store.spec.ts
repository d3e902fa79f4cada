import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { hostPaths } from '@host/host-core';
import { ServerDatabase } from '@host/host-store';
import { startTestPostgres, type TestPostgres } from '@host/host-store/testing';
import { composeHost, type Host } from './compose';
import { startBareHttpPlugin, stdioFixturePackage } from './fixture-plugins.spec-helper';

// The composed host on the SQL store: embedded in the data directory, and two hosts on one PostgreSQL server.
const TOKEN = 'sql-store-test-token-0123456789abcdef012';
const auth = { Authorization: `Bearer ${TOKEN}` };
const quiet = { log: () => undefined, httpHealthCheckMilliseconds: 0, runtimeTimings: { pingIntervalMilliseconds: 0 } };

const say = (host: Host, text: string) =>
  request(host.app)
    .post('/api/console/messages')
    .set(auth)
    .send({ conversation: { type: 'group', id: 'g1' }, sender: { id: 'u1', displayName: 'Ann' }, text });

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

  it('share the registry: a plugin registered through one is listed by the other, its secret sealed with the shared key', async () => {
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
      } finally {
        await db.close();
      }
    } finally {
      await a.close();
      await b.close();
    }
  }, 120_000);
});
