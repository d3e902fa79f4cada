import { api, buildHost, packageForm, type RunningHost } from '@host/e2e-support';
import { chat, fixturePackage, runningOn as runningOnReplica, startReplicas, type ReplicaSet } from './replica-set';
import { sleep, until } from './wait';

// Two built replicas on one PostgreSQL server. The one running a stdio plugin freezes (SIGSTOP) past its lease;
// the other takes the plugin over and delivers events whose handlers take 2 s. The frozen one wakes (SIGCONT)
// while those are in flight: its lease's epoch is stale, so it claims none of them and records no reply, and
// its next lease round stops its copy of the plugin. Every event is handled once, with one reply.
const ECHO = 'com.example.freeze-echo';

const runningOn = (host: RunningHost) => runningOnReplica(host, ECHO);

describe('a replica frozen past its lease', () => {
  let set: ReplicaSet;
  let db: ReplicaSet['db'];
  let hosts: RunningHost[];

  beforeAll(async () => {
    buildHost();
    set = await startReplicas({ names: ['replica-a', 'replica-b'], database: 'freeze', keyByte: '7c' });
    ({ db, hosts } = set);
  }, 120_000);

  afterAll(async () => {
    await set?.close();
  });

  it('wakes fenced: it claims and replies to nothing the replica that took its lease delivers', async () => {
    const [a, b] = hosts as [RunningHost, RunningHost];
    expect((await api(a, 'POST', '/api/plugins/packages', packageForm(fixturePackage(ECHO)))).status).toBe(201);
    expect((await api(a, 'POST', `/api/plugins/${ECHO}/start`)).body.plugin).toMatchObject({ state: 'running' });
    expect(
      await until(
        5_000,
        () => runningOn(b),
        (r) => r === 'replica-a',
      ),
    ).toBe('replica-a');
    expect((await chat(b, '/echo before')).body.outbound).toHaveLength(1);

    // Frozen past its 10 s lease: b takes the plugin over and runs it.
    process.kill(a.child.pid!, 'SIGSTOP');
    expect(
      await until(
        30_000,
        () => runningOn(b),
        (r) => r === 'replica-b',
      ),
    ).toBe('replica-b');

    // Slow handlings on b; a wakes while they are in flight, with notifications of their rows waiting for it.
    const sent = Array.from({ length: 8 }, (_, i) => chat(b, `/slow 2000 frozen-${i}`));
    await sleep(500);
    process.kill(a.child.pid!, 'SIGCONT');
    const answers = await Promise.all(sent);
    for (const r of answers) {
      expect(r.status).toBe(200);
      expect(r.body.deliveries).toEqual([expect.objectContaining({ pluginId: ECHO, state: 'completed' })]);
      expect(r.body.outbound).toHaveLength(1);
    }
    const ids = answers.map((r) => r.body.eventId as string);
    // Claimed by b once each; a claimed none after it woke, and no reply was recorded twice.
    const rows = await db.query<{ claimed_by: string; attempts: number }>(
      'SELECT claimed_by, attempts FROM host_event_queue WHERE event_id = ANY($1::text[])',
      [ids],
    );
    expect(rows.rows.map((r) => `${r.claimed_by.split('/')[0]} ${r.attempts}`)).toEqual(ids.map(() => 'replica-b 1'));
    const replies = await db.query<{ event_id: string; n: number }>(
      'SELECT event_id, n FROM host_event_replies WHERE event_id = ANY($1::text[])',
      [ids],
    );
    expect(replies.rows.map((r) => r.n)).toEqual(ids.map(() => 1));
    // Its next lease round finds the lease gone and stops its copy of the plugin.
    expect(
      await until(
        10_000,
        async () => a.output(),
        (o) => o.includes(`cluster: lost the lease of ${ECHO}; stopping it here`),
      ),
    ).toContain(`lost the lease of ${ECHO}`);
    const lease = await db.query<{ holder: string; epoch: string }>('SELECT holder, epoch FROM host_plugin_leases WHERE plugin_id = $1', [
      ECHO,
    ]);
    expect(lease.rows[0]).toMatchObject({ holder: 'replica-b' });
    expect(Number(lease.rows[0]!.epoch)).toBeGreaterThanOrEqual(1);
    // Both replicas serve again, through the plugin on b.
    expect((await chat(a, '/echo after')).body.outbound).toHaveLength(1);
  }, 120_000);
});
