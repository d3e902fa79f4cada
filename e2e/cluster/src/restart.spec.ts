import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, buildHost, packageForm, type RunningHost } from '@host/e2e-support';
import { chat, fixturePackage, pluginsOf, startReplicas, type ReplicaSet } from './replica-set';
import { sleep, until } from './wait';

// Three built replicas on one PostgreSQL server under a steady load: a console event every 100 ms, through each
// live replica in turn, whose handling notes the event in the plugin's data, replies, and stays in flight 400 ms
// more. The replica holding the plugin's lease is killed (SIGKILL) while handlings are in flight, some replied
// and not completed, and is started again 1 s later under the same name. Every event answered as accepted is
// answered once: one completed delivery and one reply in the shared event log, one recorded reply marked sent,
// noted by the plugin (again only when the queue delivered it again), and the restarted replica serves again.
const ECHO = 'com.example.restart-echo';
const EVERY_MS = 100;
const HANDLING_MS = 400;
/** docs/operator/cluster.md: lease expiry 10 s plus one 3 s renewal round, plus the plugin's start. */
const TAKEOVER_BOUND_MS = 15_000;

interface Sent {
  note: string;
  via: string;
  status: number;
  body?: { eventId: string; deliveries: { pluginId: string; accepted: boolean; state: string }[] };
}

type Logged = {
  eventId: string;
  completedAt: string | null;
  deliveries: { pluginId: string; state: string; error: { code: string } | null }[];
  outbound: { pluginId: string; kind: string; body: { content?: string } }[];
};

describe('the replica running a plugin, killed under load and started again at once', () => {
  let set: ReplicaSet;

  beforeAll(async () => {
    buildHost();
    set = await startReplicas({ names: ['host-1', 'host-2', 'host-3'], database: 'restart', keyByte: '3d', sharedPluginData: true });
  }, 120_000);

  afterAll(async () => {
    await set?.close();
  });

  it('answers every accepted event once, loses none, and serves again through the restarted replica', async () => {
    const { hosts, names, db } = set;
    const withWait = (m: Record<string, any>) => m.commands.push({ name: 'note', prefixes: ['/'] });
    expect((await api(hosts[0]!, 'POST', '/api/plugins/packages', packageForm(fixturePackage(ECHO, withWait)))).status).toBe(201);
    expect((await api(hosts[0]!, 'POST', `/api/plugins/${ECHO}/start`)).body.plugin).toMatchObject({ state: 'running' });
    const lease = await db.query<{ holder: string }>('SELECT holder FROM host_plugin_leases WHERE plugin_id = $1', [ECHO]);
    const victim = names.indexOf(lease.rows[0]!.holder);
    expect(victim).toBeGreaterThanOrEqual(0);
    const survivor = hosts[(victim + 1) % names.length]!;
    const view = async (h: RunningHost) => (await pluginsOf(h)).find((p) => p.pluginId === ECHO);
    for (const h of hosts)
      expect(
        await until(
          5_000,
          async () => (await view(h))?.state,
          (s) => s === 'running',
        ),
      ).toBe('running');
    const oldPid = (await view(hosts[victim]!))!.runtime!.pid!;

    // The load: one event every 100 ms, through each live replica in turn, none waiting for the one before.
    const sent: Sent[] = [];
    const down = new Set<number>();
    const answers: Promise<void>[] = [];
    let loading = true;
    const load = (async () => {
      for (let n = 1, turn = 0; loading; n++) {
        while (down.has(turn % names.length)) turn++;
        const i = turn++ % names.length;
        const note = `n${n}`;
        answers.push(
          chat(hosts[i]!, `/note wait=${HANDLING_MS} ${note}`).then(
            (r) => void sent.push({ note, via: names[i]!, status: r.status, body: r.body }),
            // Killed while this request was open: the event may or may not have been taken.
            () => void sent.push({ note, via: names[i]!, status: 0 }),
          ),
        );
        await sleep(EVERY_MS);
      }
    })();
    const accepted = () => sent.filter((s) => s.status === 200);

    // Killed once it has handlings in flight (claimed, not final) and some events were answered.
    const inFlight = async () =>
      (
        await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM host_event_queue WHERE plugin_id = $1 AND state IN ('claimed', 'decided') AND claimed_by LIKE $2`,
          [ECHO, `${names[victim]}/%`],
        )
      ).rows[0]!.n;
    await until(
      30_000,
      async () => accepted().length,
      (c) => c >= 10,
    );
    expect(await until(30_000, inFlight, (n) => n >= 2)).toBeGreaterThanOrEqual(2);
    down.add(victim);
    const killedAt = Date.now();
    expect((await hosts[victim]!.stop('SIGKILL')).signal).toBe('SIGKILL');
    const acceptedAtKill = accepted().length;

    // Started again 1 s later under the same name, on its data directory.
    await sleep(1_000);
    await set.start(victim);
    down.delete(victim);

    // Taken over: the plugin runs again in a new process (on the restarted replica or another one).
    const moved = await until(
      TAKEOVER_BOUND_MS + 15_000,
      () => view(survivor),
      (p) => p?.state === 'running' && p.runtime?.pid !== oldPid,
    );
    const takeoverMs = Date.now() - killedAt;
    expect(moved).toMatchObject({ state: 'running' });
    expect(moved!.runtime!.pid).not.toBe(oldPid);

    // The restarted replica serves again: an event through it is answered with the plugin's reply.
    const again = await until(
      20_000,
      () => chat(hosts[victim]!, '/note after-restart'),
      (r) => r.status === 200 && r.body.outbound?.length === 1,
    );
    expect(again.body.deliveries).toEqual([expect.objectContaining({ pluginId: ECHO, accepted: true, state: 'completed' })]);
    expect(again.body.outbound[0].body.content).toMatch(/^noted after-restart \(\d+ lines\)$/);

    await until(
      60_000,
      async () => accepted().length,
      (c) => c >= acceptedAtKill + 20,
    );
    loading = false;
    await load;
    await Promise.all(answers);

    // Each accepted event was accepted by the plugin.
    const all = accepted();
    const ids = all.map((s) => s.body!.eventId);
    for (const s of all) expect(s.body!.deliveries.map((d) => `${d.pluginId} ${d.accepted}`)).toEqual([`${ECHO} true`]);

    // The queue: one row per event, final and accepted; one recorded reply per event, marked sent.
    const rows = await until(
      30_000,
      async () =>
        (
          await db.query<{ event_id: string; state: string; attempts: number; decision: { accepted: boolean } }>(
            'SELECT event_id, state, attempts, decision FROM host_event_queue WHERE plugin_id = $1 AND event_id = ANY($2)',
            [ECHO, ids],
          )
        ).rows,
      (r) => r.length === ids.length && r.every((x) => x.state === 'done'),
    );
    expect(rows.filter((r) => r.state !== 'done' || r.decision?.accepted !== true)).toEqual([]);
    expect(rows.length).toBe(ids.length);
    const replies = await db.query<{ event_id: string; n: number; sent: boolean }>(
      'SELECT event_id, count(*)::int AS n, bool_and(sent_at IS NOT NULL) AS sent FROM host_event_replies WHERE plugin_id = $1 AND event_id = ANY($2) GROUP BY event_id',
      [ECHO, ids],
    );
    expect(replies.rows.filter((r) => r.n !== 1 || !r.sent)).toEqual([]);
    expect(replies.rows.length).toBe(ids.length);

    // The shared event log, as any replica lists it: each accepted event once, its one delivery completed, one
    // reply with the note; and no delivery of any event ended `interrupted` when its reply went out.
    const listed = async () => (await api(survivor, 'GET', '/api/events?limit=1000')).body.events as Logged[];
    const log = await until(30_000, listed, (l) => ids.every((id) => l.some((r) => r.eventId === id && r.completedAt !== null)));
    for (const s of all) {
      const records = log.filter((r) => r.eventId === s.body!.eventId);
      expect(records).toHaveLength(1);
      const [r] = records as [Logged];
      expect(r.deliveries.map((d) => `${d.pluginId} ${d.state}`)).toEqual([`${ECHO} completed`]);
      const texts = r.outbound.filter((o) => o.pluginId === ECHO).map((o) => o.body.content);
      expect(texts).toHaveLength(1);
      expect(texts[0]).toMatch(new RegExp(`^noted ${s.note} \\(\\d+ lines\\)$`));
    }
    const interruptedWithReply = log.filter(
      (r) => r.deliveries.some((d) => d.state === 'interrupted') && r.outbound.some((o) => o.pluginId === ECHO),
    );
    expect(interruptedWithReply.map((r) => r.eventId)).toEqual([]);

    // The plugin's own record: every accepted event noted; noted twice only when the queue delivered it again.
    const notes = readFileSync(join(set.pluginData, ECHO, 'data', 'notes.txt'), 'utf8')
      .trim()
      .split('\n');
    const times = new Map<string, number>();
    for (const line of notes) times.set(line.split(' ')[0]!, (times.get(line.split(' ')[0]!) ?? 0) + 1);
    expect(ids.filter((id) => !times.has(id))).toEqual([]);
    const deliveredAgain = new Set(rows.filter((r) => r.attempts > 1).map((r) => r.event_id));
    expect(ids.filter((id) => times.get(id)! > 1 && !deliveredAgain.has(id))).toEqual([]);

    process.stdout.write(
      `restart under load: takeover after SIGKILL ${takeoverMs} ms (plugin on ${moved!.runtime!.replica}); ` +
        `${all.length} accepted events, ${acceptedAtKill} before the kill; ${deliveredAgain.size} delivered again; ` +
        `${sent.filter((s) => s.status !== 200).length} not answered as accepted\n`,
    );
  }, 240_000);
});
