import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { api, buildHost, packageForm, type RunningHost } from '@host/e2e-support';
import { chat, FIXTURES, fixturePackage, pluginsOf, runningOn, startReplicas, type ReplicaSet } from './replica-set';
import { until } from './wait';

// Three built hosts on one PostgreSQL server, as docs/operator/cluster.md sets them up: one package store,
// one registry, one host key, and plugin-data/ on a volume they all mount (here: one directory each links
// to). A stdio plugin that writes to its data directory is installed and started through host 1, which takes
// its lease; an HTTP plugin is registered through host 3. Chat goes to all three at once; host 1 is killed
// with SIGKILL; another replica takes the plugin over within the documented bound and every event accepted
// before and after has exactly one outcome and at most one reply per plugin, and the plugin's data is whole.
const ECHO = 'com.example.cluster-echo';
const BARE = 'com.example.bare-echo';
/** docs/operator/cluster.md: lease expiry 10 s plus one 3 s renewal round, plus the plugin's start. */
const TAKEOVER_BOUND_MS = 15_000;

/** What an operator compares between replicas: every plugin with its version, transport, intent, state and where it runs. */
const viewOf = async (host: RunningHost) =>
  (await pluginsOf(host)).map(
    (p) =>
      `${p.pluginId} ${p.version} ${p.transport} enabled=${p.enabled} ${p.state}${p.runtime?.replica ? ` on ${p.runtime.replica}` : ''}`,
  );
const echoReplica = (host: RunningHost) => runningOn(host, ECHO);

interface Sent {
  note: string;
  via: string;
  status: number;
  body: {
    eventId: string;
    deliveries: { pluginId: string; accepted: boolean }[];
    outbound: { pluginId: string; body: { content?: string } }[];
  };
}

describe('three hosts on one PostgreSQL server', () => {
  let set: ReplicaSet;
  let work: string;
  let db: ReplicaSet['db'];
  let hosts: RunningHost[];
  const names = ['host-1', 'host-2', 'host-3'];
  let bare: ChildProcess | undefined;

  beforeAll(async () => {
    buildHost();
    set = await startReplicas({ names, database: 'cluster', keyByte: '5a', sharedPluginData: true });
    ({ work, db, hosts } = set);
  }, 120_000);

  afterAll(async () => {
    bare?.kill('SIGKILL');
    await set?.close();
  });

  it('run each stdio plugin on one replica, move it when that replica is killed, and deliver every event once', async () => {
    const [one, two, three] = hosts as [RunningHost, RunningHost, RunningHost];
    for (const h of hosts) expect(h.output()).toContain('store: PostgreSQL server postgres://host@127.0.0.1:');

    // Installed and started through host 1: every replica unpacks the package; only host 1 runs it (its lease).
    expect(
      (
        await api(
          one,
          'POST',
          '/api/plugins/packages',
          packageForm(fixturePackage(ECHO, (m) => m.commands.push({ name: 'note', prefixes: ['/'] }))),
        )
      ).status,
    ).toBe(201);
    for (const dir of set.dataDirs) {
      const file = join(dir, 'plugins-v2', ECHO, 'manifest.json');
      expect(await until(2000, async () => existsSync(file), Boolean)).toBe(true);
    }
    const started = await api(one, 'POST', `/api/plugins/${ECHO}/start`);
    expect(started.body.plugin).toMatchObject({ state: 'running', runtime: { replica: 'host-1' } });
    for (const h of hosts)
      expect(
        await until(
          2000,
          () => echoReplica(h),
          (r) => r === 'host-1',
        ),
      ).toBe('host-1');
    // Starting it through another replica does not start a second process: host 1 keeps it.
    expect((await api(two, 'POST', `/api/plugins/${ECHO}/start`)).body.plugin.runtime.replica).toBe('host-1');
    const leases = await db.query('SELECT plugin_id, holder FROM host_plugin_leases');
    expect(leases.rows).toEqual([{ plugin_id: ECHO, holder: 'host-1' }]);
    expect(one.output()).toContain(`took the lease of ${ECHO}`);
    expect(two.output() + three.output()).not.toContain(`took the lease of ${ECHO}`);

    // An HTTP plugin registered through host 3 is delivered to from every replica within a second.
    writeFileSync(join(work, 'bare-secret'), '');
    bare = spawn(
      process.execPath,
      [join(FIXTURES, 'http-plugin-bare/server.mjs'), '--port', '0', '--secret-file', join(work, 'bare-secret')],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const listening = JSON.parse(await new Promise<string>((ok) => createInterface({ input: bare!.stdout! }).once('line', ok))).listening;
    const registered = await api(three, 'POST', '/api/plugins/http', { baseUrl: listening });
    expect(registered.status).toBe(201);
    writeFileSync(join(work, 'bare-secret'), registered.body.signingSecret);
    for (const h of [one, two]) {
      const recipients = async () =>
        ((await chat(h, '/echo both')).body.deliveries as { pluginId: string }[]).map((d) => d.pluginId).sort();
      expect(await until(1000, recipients, (ids) => ids.length === 2)).toEqual([BARE, ECHO]);
    }

    // A steady load over all three replicas: each sends its next note as soon as the last one is answered.
    const sent: Sent[] = [];
    const live = new Set<RunningHost>(hosts);
    let n = 0;
    let loading = true;
    const load = Promise.all(
      hosts.map(async (h, i) => {
        while (loading && live.has(h)) {
          const note = `n${++n}`;
          try {
            const r = await chat(h, `/note ${note}`);
            sent.push({ note, via: names[i]!, status: r.status, body: r.body });
          } catch {
            // The replica was killed while this request was open: the event may or may not have been accepted.
          }
        }
      }),
    );
    const accepted = () => sent.filter((s) => s.status === 200);
    await until(
      20_000,
      async () => accepted().length,
      (c) => c >= 30,
    );

    // SIGKILL the replica holding the lease: another takes the plugin over within the bound and starts it.
    live.delete(one);
    const killedAt = Date.now();
    expect((await one.stop('SIGKILL')).signal).toBe('SIGKILL');
    const acceptedBeforeKill = accepted().length;
    const newHolder = await until(
      TAKEOVER_BOUND_MS + 5_000,
      () => echoReplica(two),
      (r) => r !== undefined && r !== 'host-1',
    );
    const takeoverMs = Date.now() - killedAt;
    expect(['host-2', 'host-3']).toContain(newHolder);
    expect(takeoverMs).toBeLessThan(TAKEOVER_BOUND_MS + 5_000); // the documented bound plus the plugin's start
    await until(
      30_000,
      async () => accepted().length,
      (c) => c >= acceptedBeforeKill + 30,
    );
    loading = false;
    await load;

    // Every accepted event: answered by both plugins, once each, with the stdio plugin's one reply.
    const all = accepted();
    expect(all.length).toBeGreaterThanOrEqual(60);
    for (const s of all) {
      expect(s.body.deliveries.map((d) => `${d.pluginId} ${d.accepted}`).sort()).toEqual([`${BARE} true`, `${ECHO} true`]);
      const echoReplies = s.body.outbound.filter((o) => o.pluginId === ECHO).map((o) => o.body.content);
      // Never two replies. Around the takeover the answer of an event taken by the killed replica is lost with it;
      // the queue's own record of one reply per event, each marked sent, is checked below.
      expect(echoReplies.length).toBeLessThanOrEqual(1);
      for (const text of echoReplies) expect(text).toMatch(new RegExp(`^noted ${s.note} \\(\\d+ lines\\)$`));
    }
    // The queue has exactly one final outcome per accepted event of the stdio plugin, and one recorded reply.
    const ids = all.map((s) => s.body.eventId);
    const rows = await until(
      20_000,
      async () => (await db.query('SELECT event_id, state, decision FROM host_event_queue WHERE event_id = ANY($1)', [ids])).rows,
      (r) => r.length === ids.length && r.every((x) => x.state === 'done'),
    );
    expect(rows.length).toBe(ids.length);
    for (const r of rows) expect(r).toMatchObject({ state: 'done', decision: { accepted: true } });
    const replies = await db.query('SELECT event_id, count(*)::int AS c FROM host_event_replies WHERE plugin_id = $1 GROUP BY event_id', [
      ECHO,
    ]);
    expect(replies.rows.filter((r) => r.c !== 1)).toEqual([]);
    // Each recorded reply went out: one recorded just before the kill was sent by the replica that took the plugin over.
    const unsent = await db.query(
      'SELECT event_id FROM host_event_replies WHERE plugin_id = $1 AND sent_at IS NULL AND event_id = ANY($2)',
      [ECHO, ids],
    );
    expect(unsent.rows).toEqual([]);
    const unreplied = ids.filter((id) => !replies.rows.some((r) => r.event_id === id));
    expect(unreplied).toEqual([]);
    // Not one event (accepted or not) was queued twice for the plugin: one row per (event, plugin) is the key.
    const dup = await db.query('SELECT event_id FROM host_event_queue GROUP BY event_id, plugin_id HAVING count(*) > 1');
    expect(dup.rows).toEqual([]);

    // The plugin's data is intact on the shared volume: a line for every accepted note, before and after the kill.
    const notes = readFileSync(join(set.pluginData, ECHO, 'data', 'notes.txt'), 'utf8');
    const noted = new Set(
      notes
        .trim()
        .split('\n')
        .map((l) => l.split(' ')[0]),
    );
    expect(ids.filter((id) => !noted.has(id))).toEqual([]);

    // The surviving replicas agree, and so does the killed one once it is back on its data directory.
    const expected = [`${BARE} 1.0.0 http enabled=true running`, `${ECHO} 1.0.0 stdio-jsonrpc enabled=true running on ${newHolder}`];
    expect(await viewOf(two)).toEqual(expected);
    expect(await viewOf(three)).toEqual(expected);
    await set.start(0);
    expect(
      await until(
        2000,
        () => viewOf(hosts[0]!),
        (v) => v.join() === expected.join(),
      ),
    ).toEqual(expected);
    // It does not take the plugin back: it runs on one replica only.
    expect((await db.query('SELECT holder FROM host_plugin_leases WHERE plugin_id = $1', [ECHO])).rows).toEqual([{ holder: newHolder }]);
    process.stdout.write(`takeover after SIGKILL: ${takeoverMs} ms; accepted events: ${all.length}\n`);
  }, 150_000);
});
