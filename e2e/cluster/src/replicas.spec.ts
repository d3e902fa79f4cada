import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { buildZip } from '@host/host-installer/testing';
import { startTestPostgres, type TestPostgres } from '@host/host-store/testing';
import { api, buildHost, packageForm, ROOT, startHost, type RunningHost } from '@host/e2e-support';

// Three built hosts on one PostgreSQL server, as docs/operator/cluster.md sets them up: one package store,
// one registry, one host key. A stdio plugin installed through one replica runs on the one that chats; an
// HTTP plugin registered through a third is delivered to from there within a second; the replica the
// install went through is killed with SIGKILL and chat goes on, with the survivors' admin APIs agreeing.
const FIXTURES = join(ROOT, 'e2e/fixtures');
const ECHO = 'com.example.cluster-echo';
const BARE = 'com.example.bare-echo';

function echoPackage(): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURES, 'misbehaving-plugin/manifest.json'), 'utf8'));
  manifest.pluginId = ECHO;
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest) },
    { name: 'plugin.mjs', data: readFileSync(join(FIXTURES, 'misbehaving-plugin/plugin.mjs')) },
  ]);
}

async function until<T>(ms: number, read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const chat = (host: RunningHost, text: string) =>
  api(host, 'POST', '/api/console/messages', {
    conversation: { type: 'group', id: 'room' },
    sender: { id: 'u1', displayName: 'Ann' },
    text,
  });

/** What an operator compares between replicas: every plugin with its version, transport and intent. */
const registryOf = async (host: RunningHost) =>
  (
    (await api(host, 'GET', '/api/plugins')).body.plugins as { pluginId: string; version: string; transport: string; enabled: boolean }[]
  ).map((p) => `${p.pluginId} ${p.version} ${p.transport} enabled=${p.enabled}`);

describe('three hosts on one PostgreSQL server', () => {
  let pg: TestPostgres;
  let work: string;
  let env: Record<string, string>;
  const hosts: RunningHost[] = [];
  const dataDirs: string[] = [];
  let bare: ChildProcess | undefined;

  beforeAll(async () => {
    buildHost();
    pg = await startTestPostgres();
    work = mkdtempSync(join(tmpdir(), 'e2e-cluster-'));
    writeFileSync(join(work, 'host.key'), '5a'.repeat(32) + '\n', { mode: 0o600 });
    env = { HOST_DATABASE_URL: await pg.createDatabase('cluster'), HOST_KEY_FILE: join(work, 'host.key') };
    for (const name of ['host-1', 'host-2', 'host-3']) {
      dataDirs.push(join(work, name));
      hosts.push(await startHost(join(work, name), { ...env, HOST_REPLICA_NAME: name }));
    }
  }, 120_000);

  afterAll(async () => {
    bare?.kill('SIGKILL');
    for (const h of hosts) await h.stop('SIGTERM').catch(() => undefined);
    await pg?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('share packages, registrations and the registry, and go on chatting when a replica is killed', async () => {
    const [one, two, three] = hosts as [RunningHost, RunningHost, RunningHost];
    for (const h of hosts) expect(h.output()).toContain('store: PostgreSQL server postgres://host@127.0.0.1:');

    // Installed through host 1: every replica unpacks the package from the package store.
    expect((await api(one, 'POST', '/api/plugins/packages', packageForm(echoPackage()))).status).toBe(201);
    for (const dir of dataDirs) {
      const file = join(dir, 'plugins-v2', ECHO, 'manifest.json');
      expect(await until(2000, async () => existsSync(file), Boolean)).toBe(true);
    }
    // Run on host 2, the replica users chat with.
    expect((await api(two, 'POST', `/api/plugins/${ECHO}/start`)).body.plugin.state).toBe('running');
    expect((await chat(two, '/echo first')).body.outbound).toEqual([
      expect.objectContaining({
        pluginId: ECHO,
        body: expect.objectContaining({ markdown: { content: '<qqbot-at-user id="u1" /> first' } }),
      }),
    ]);

    // An HTTP plugin registered through host 3 is delivered to from host 2 within a second.
    writeFileSync(join(work, 'bare-secret'), '');
    bare = spawn(
      process.execPath,
      [join(FIXTURES, 'http-plugin-bare/server.mjs'), '--port', '0', '--secret-file', join(work, 'bare-secret')],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const listening = JSON.parse(await new Promise<string>((ok) => createInterface({ input: bare!.stdout! }).once('line', ok))).listening;
    const registered = await api(three, 'POST', '/api/plugins/http', { baseUrl: listening });
    expect(registered.status).toBe(201);
    writeFileSync(join(work, 'bare-secret'), registered.body.signingSecret);
    const recipients = async () =>
      ((await chat(two, '/echo both')).body.deliveries as { pluginId: string }[]).map((d) => d.pluginId).sort();
    expect(await until(1000, recipients, (ids) => ids.length === 2)).toEqual([BARE, ECHO]);

    // SIGKILL the replica the install went through: chat through host 2 goes on, one reply per plugin per message.
    expect((await one.stop('SIGKILL')).signal).toBe('SIGKILL');
    for (let i = 0; i < 10; i++) {
      const r = await chat(two, `/echo after ${i}`);
      expect(r.status).toBe(200);
      expect((r.body.outbound as { pluginId: string; error: unknown }[]).map((o) => `${o.pluginId} ${o.error ?? 'ok'}`).sort()).toEqual([
        `${BARE} ok`,
        `${ECHO} ok`,
      ]);
    }
    // The surviving replicas agree, and so does the killed one once it is back on its data directory.
    const expected = [`${BARE} 1.0.0 http enabled=true`, `${ECHO} 1.0.0 stdio-jsonrpc enabled=true`];
    expect(await registryOf(two)).toEqual(expected);
    expect(await registryOf(three)).toEqual(expected);
    hosts[0] = await startHost(dataDirs[0]!, { ...env, HOST_REPLICA_NAME: 'host-1' });
    expect(await registryOf(hosts[0])).toEqual(expected);
  }, 120_000);
});
