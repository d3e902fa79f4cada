import { readFileSync } from 'node:fs';
import type { MessageEvent } from '@host/protocol';
import { migrate, ServerDatabase, SqlEventInbox } from '@host/host-store';
import { startTestPostgres, type TestPostgres } from '@host/host-store/testing';
import type { QueueNotice } from './queue-notices';
import { SqlDeliveryQueue } from './sql-delivery-queue';
import { LeaseLostError } from './sql-reply-records';
import { SqlLeases } from './sql-leases';

// Leases and the durable delivery queue against a real PostgreSQL server (two connections pools stand for two replicas).
let server: TestPostgres;
let a: ServerDatabase;
let b: ServerDatabase;
beforeAll(async () => {
  server = await startTestPostgres();
  const url = await server.createDatabase('cluster_tables');
  a = await ServerDatabase.open(url);
  b = await ServerDatabase.open(url);
  await migrate(a);
}, 120_000);
afterAll(async () => {
  await a?.close();
  await b?.close();
  await server?.stop();
});

/**
 * The lease of `pluginId` as it stands once its holder stopped renewing past its end. Leases in these tests last
 * long enough that a slow machine never sees one end by itself; this is how one ends on purpose.
 */
async function expire(pluginId: string): Promise<void> {
  await a.query(`UPDATE host_plugin_leases SET expires_at = now() - interval '1 second' WHERE plugin_id = $1`, [pluginId]);
}

describe('leases', () => {
  it('let one replica hold a plugin until it releases it or stops renewing', async () => {
    const one = new SqlLeases(a, 'one', 30_000);
    const two = new SqlLeases(b, 'two', 30_000);
    const [x, y] = await Promise.all([one.acquire(['p.race']), two.acquire(['p.race'])]);
    expect([...x, ...y]).toEqual(['p.race']); // exactly one of them got it
    const holder = x.length ? one : two;
    const other = x.length ? two : one;
    expect(await other.acquire(['p.race'])).toEqual([]);
    expect(await holder.renew()).toEqual(['p.race']);
    expect(await holder.acquire(['p.race'])).toEqual(['p.race']); // its own lease: kept
    // Given up with a hold (an operator's stop): nobody takes it meanwhile, except by force.
    await holder.release('p.race', { state: 'stopped', crashCount: 0 }, 60_000);
    expect(await other.acquire(['p.race'])).toEqual([]);
    expect((await other.list()).find((l) => l.pluginId === 'p.race')).toMatchObject({
      holder: '',
      status: { state: 'stopped' },
      live: true,
    });
    expect(await other.acquire(['p.race'], true)).toEqual(['p.race']);
    // The holder stops renewing: once the lease expired, the other takes it, and the first no longer renews it.
    await expire('p.race');
    expect(await holder.acquire(['p.race'])).toEqual(['p.race']);
    expect(await other.renew()).toEqual([]);
  });

  it('fence a replica whose lease moved while it was frozen: it claims, records and sends nothing more for the plugin', async () => {
    const one = new SqlLeases(a, 'one', 30_000);
    const two = new SqlLeases(b, 'two', 30_000);
    const qOne = new SqlDeliveryQueue(a, 'one');
    const qTwo = new SqlDeliveryQueue(b, 'two');
    expect(await one.acquire(['p.fence'])).toEqual(['p.fence']);
    const stale = one.epochs.get('p.fence')!;
    // One stops renewing (frozen) past the lease; two takes it over with the next epoch.
    await expire('p.fence');
    expect(await two.acquire(['p.fence'])).toEqual(['p.fence']);
    expect(two.epochs.get('p.fence')).toBe(stale + 1);
    await qTwo.enqueue('e.fence', 'p.fence', { eventId: 'e.fence' });
    // One wakes up and acts on what it believes: nothing it does lands.
    expect(await qOne.claim('p.fence', 10, true, stale)).toEqual([]);
    await expect(qOne.recordReply('e.fence', 'p.fence', 1, { message: 'late' }, stale)).rejects.toBeInstanceOf(LeaseLostError);
    await expect(qOne.recordSend('e.fence', 'p.fence', 1, 'digest', { message: 'late' }, stale)).rejects.toBeInstanceOf(LeaseLostError);
    // The holder's own calls go through.
    expect((await qTwo.claim('p.fence', 10, true, two.epochs.get('p.fence'))).map((r) => r.eventId)).toEqual(['e.fence']);
    expect((await qTwo.recordReply('e.fence', 'p.fence', 1, { message: 'hi' }, two.epochs.get('p.fence'))).fresh).toBe(true);
    // A reply the new holder recorded is answered as recorded to a stale process (it is not sent again), not refused.
    expect((await qOne.recordReply('e.fence', 'p.fence', 1, { message: 'late' }, stale)).fresh).toBe(false);
    // Taken back by one (two stopped renewing): a new epoch again, which one's calls now carry.
    await expire('p.fence');
    expect(await one.acquire(['p.fence'])).toEqual(['p.fence']);
    expect(one.epochs.get('p.fence')).toBe(stale + 2);
    expect((await qOne.recordReply('e.fence', 'p.fence', 2, { message: 'now' }, one.epochs.get('p.fence'))).fresh).toBe(true);
  });

  it('carry the status the holder publishes, and only the holder can publish it', async () => {
    const one = new SqlLeases(a, 'one');
    const two = new SqlLeases(b, 'two');
    await one.acquire(['p.status']);
    await one.publishStatus('p.status', { state: 'running', crashCount: 0 });
    await two.publishStatus('p.status', { state: 'stopped', crashCount: 0 });
    expect((await two.list()).find((l) => l.pluginId === 'p.status')).toEqual({
      pluginId: 'p.status',
      holder: 'one',
      status: { state: 'running', crashCount: 0 },
      live: true,
    });
  });
});

describe("a gone replica's inbox", () => {
  const event = (id: string) => ({ eventId: id, text: 'hi' }) as unknown as MessageEvent;
  const accepted = async (id: string, secondsAgo: number) =>
    a.query(`UPDATE host_event_inbox SET accepted_at = now() - make_interval(secs => $2) WHERE event_id = $1`, [id, secondsAgo]);

  it('is taken by one live replica once its heartbeat ended, oldest first; a live or only slow replica keeps its own', async () => {
    const gone = new SqlEventInbox(a, 'gone');
    const slow = new SqlEventInbox(a, 'slow');
    const one = new SqlEventInbox(a, 'one');
    const two = new SqlEventInbox(b, 'two');
    await new SqlLeases(a, 'gone', 30_000).heartbeat();
    await new SqlLeases(a, 'slow', 30_000).heartbeat();
    await new SqlLeases(a, 'one', 30_000).heartbeat();
    await new SqlLeases(b, 'two', 30_000).heartbeat();
    for (const id of ['g2', 'g1', 'g-new']) await gone.add(event(id));
    await slow.add(event('s1'));
    await one.add(event('o1'));
    await accepted('g1', 60);
    await accepted('g2', 50);
    await accepted('s1', 60);
    await accepted('o1', 60);
    // Alive: nothing is taken.
    expect(await one.adoptOrphans(10_000)).toEqual([]);
    // The heartbeat of `gone` ended; `slow` still beats.
    await a.query(`UPDATE host_replicas SET expires_at = now() - interval '1 second' WHERE name = 'gone'`);
    const [x, y] = await Promise.all([one.adoptOrphans(10_000), two.adoptOrphans(10_000)]);
    // Each event by one of the two, oldest first; one accepted within the grace is left for now.
    expect([...x, ...y].map((e) => e.eventId).sort()).toEqual(['g1', 'g2']);
    const taker = x.length ? one : two;
    expect((x.length ? x : y).map((e) => e.eventId)).toEqual(['g1', 'g2']);
    expect((await taker.unsettled()).map((e) => e.eventId)).toEqual(expect.arrayContaining(['g1', 'g2']));
    expect((await gone.unsettled()).map((e) => e.eventId)).toEqual(['g-new']);
    expect((await slow.unsettled()).map((e) => e.eventId)).toEqual(['s1']);
    // A replica that never wrote a heartbeat (an older host) counts as gone too, past the grace.
    await new SqlEventInbox(a, 'older').add(event('old1'));
    await accepted('old1', 60);
    expect((await one.adoptOrphans(10_000)).map((e) => e.eventId)).toEqual(['old1']);
  });
});

describe('the delivery queue', () => {
  const event = (id: string) => ({ eventId: id, text: 'hi' });

  it('keeps one row per (event, plugin), claimed by one replica, with one final outcome', async () => {
    const origin = new SqlDeliveryQueue(a, 'one');
    const holder = new SqlDeliveryQueue(b, 'two');
    expect(await origin.enqueue('e1', 'p.q', event('e1'))).toBe(true);
    expect(await holder.enqueue('e1', 'p.q', event('e1'))).toBe(false); // the same event taken again elsewhere
    expect(await origin.enqueue('e2', 'p.q', event('e2'))).toBe(true);
    const [c1, c2] = await Promise.all([holder.claim('p.q', 1, false), origin.claim('p.q', 1, false)]);
    expect([...c1, ...c2].map((r) => r.eventId).sort()).toEqual(['e1', 'e2']); // SKIP LOCKED: no row twice
    expect(c1[0]).toMatchObject({ origin: 'one', state: 'claimed', claimedBy: holder.claimer, event: event(c1[0]!.eventId) });
    const id = c1[0]!.eventId;
    // Only the claimer records the outcome, once.
    expect(await origin.finish(id, 'p.q', 'one', { accepted: false }, { error: null })).toBe(false);
    await holder.decide(id, 'p.q', 'one', { accepted: true });
    expect(await holder.finish(id, 'p.q', 'one', { accepted: false }, { error: null })).toBe(true);
    expect(await holder.finish(id, 'p.q', 'one', { accepted: false }, { error: { code: 'x' } })).toBe(false);
    expect(await origin.get(id, 'p.q')).toMatchObject({ state: 'done', decision: { accepted: true }, completion: { error: null } });
    expect((await origin.settled([{ eventId: id, pluginId: 'p.q' }])).map((r) => r.eventId)).toEqual([id]);
  });

  it('writes calls made together in batches, with the same answers as one by one', async () => {
    const origin = new SqlDeliveryQueue(a, 'one');
    const seen: QueueNotice[] = [];
    const stop = await origin.watch(
      (n) => seen.push(n),
      () => undefined,
    );
    try {
      // 60 calls at once: the first go alone, the rest wait and go in batches; the same pair twice is queued once.
      const ids = Array.from({ length: 60 }, (_, i) => `b${i}`);
      const queued = await Promise.all([...ids, 'b0', 'b1'].map((id) => origin.enqueue(id, 'p.batch', event(id))));
      expect(queued.slice(2, 60).every(Boolean)).toBe(true);
      // Each pair taken twice at once: queued by exactly one of the two calls.
      expect([queued[0]! !== queued[60]!, queued[1]! !== queued[61]!]).toEqual([true, true]);
      const claimed = await origin.claim('p.batch', 100, false);
      // Oldest first: a batch keeps the order of its calls (b0 and b1 were taken twice at once: where either call put them).
      expect(claimed.map((r) => r.eventId).filter((id) => id !== 'b0' && id !== 'b1')).toEqual(ids.slice(2));
      expect(claimed.map((r) => r.eventId).sort()).toEqual([...ids].sort());
      // Each row made final once, even when two calls finish it in one batch.
      const finished = await Promise.all(
        [...ids, ...ids].map((id, i) => origin.finish(id, 'p.batch', 'two', { accepted: i < 60 }, { error: null }, false, [])),
      );
      expect(finished.filter(Boolean)).toHaveLength(60);
      for (const id of ids) expect(finished[ids.indexOf(id)]! || finished[60 + ids.indexOf(id)]!).toBe(true);
      expect((await origin.settled(ids.map((eventId) => ({ eventId, pluginId: 'p.batch' })))).every((r) => r.state === 'done')).toBe(true);
      const deadline = Date.now() + 10_000;
      while (seen.filter((n) => n.k === 'done').length < 60 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(
        seen
          .filter((n) => n.k === 'done')
          .map((n) => (n as { e: string }).e)
          .sort(),
      ).toEqual([...ids].sort());
      // Replies recorded at once, several of one event: each numbered once, the event's sequence numbers 1..n; the same reply twice is recorded once.
      const recorded = await Promise.all(
        [1, 2, 3, 4, 5, 6, 1].map((n, i) => origin.recordReply('b0', i % 2 ? 'p.r1' : 'p.r2', n, { message: { text: `r${i}` } })),
      );
      expect(recorded.slice(1, 6).every((r) => r.fresh)).toBe(true);
      expect(recorded[0]!.fresh !== recorded[6]!.fresh).toBe(true); // taken twice at once: recorded by one of the two calls
      expect(recorded[6]!.reply.sequence).toBe(recorded[0]!.reply.sequence);
      expect(
        recorded
          .filter((r) => r.fresh)
          .map((r) => r.reply.sequence)
          .sort((x, y) => x - y),
      ).toEqual([1, 2, 3, 4, 5, 6]);
      // A call the database refuses (jsonb takes no NUL character) fails alone; the others of its batch are queued.
      const mixed = await Promise.allSettled(
        ['m0', 'm1', 'm2', 'bad', 'm3', 'm4'].map((id) => origin.enqueue(id, 'p.mixed', id === 'bad' ? { text: 'a\u0000b' } : event(id))),
      );
      expect(mixed.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      expect((await origin.claim('p.mixed', 10, false)).map((r) => r.eventId).sort()).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
      // A new row is announced once per plugin and statement, not once per row.
      expect(seen.filter((n) => n.k === 'new').length).toBeLessThan(60);
    } finally {
      await stop();
    }
  });

  it('gives rows a dead claimer left to the replica taking over, oldest first', async () => {
    const dead = new SqlDeliveryQueue(a, 'one');
    const next = new SqlDeliveryQueue(b, 'two');
    for (const id of ['o1', 'o2', 'o3']) await dead.enqueue(id, 'p.orphan', event(id));
    expect((await dead.claim('p.orphan', 2, false)).map((r) => r.eventId)).toEqual(['o1', 'o2']);
    expect((await next.claim('p.orphan', 10, false)).map((r) => r.eventId)).toEqual(['o3']);
    const taken = await next.claim('p.orphan', 10, true);
    expect(taken.map((r) => [r.eventId, r.attempts])).toEqual([
      ['o1', 2],
      ['o2', 2],
    ]);
    // The same replica restarted is another claimer: what its previous run left is taken over too.
    const again = new SqlDeliveryQueue(b, 'two');
    expect((await again.claim('p.orphan', 10, true)).map((r) => r.eventId)).toEqual(['o1', 'o2', 'o3']);
  });

  it('records each reply once before it is sent, numbering the provider sequence across plugins and replicas', async () => {
    const one = new SqlDeliveryQueue(a, 'one');
    const two = new SqlDeliveryQueue(b, 'two');
    const [r1, r2] = await Promise.all([one.recordReply('e.r', 'p.a', 1), two.recordReply('e.r', 'p.b', 1)]);
    expect([r1.fresh, r2.fresh]).toEqual([true, true]);
    expect([r1.reply.sequence, r2.reply.sequence].sort()).toEqual([1, 2]);
    await one.noteReply('e.r', 'p.a', 1, { messageId: 'm1' });
    // The delivery again after a takeover: the first reply is recorded, so it is not sent again; the next is new.
    expect(await two.recordReply('e.r', 'p.a', 1)).toEqual({
      fresh: false,
      reply: { n: 1, sequence: r1.reply.sequence, outbound: { messageId: 'm1' }, sent: true },
    });
    expect((await two.recordReply('e.r', 'p.a', 2)).reply.sequence).toBe(3);
    expect((await one.replies('e.r', 'p.a')).map((r) => r.n)).toEqual([1, 2]);
  });

  it('lets one process only send a reply or send recorded but never marked sent, and only the one holding the event now', async () => {
    const dead = new SqlDeliveryQueue(a, 'one');
    const [next, other] = [new SqlDeliveryQueue(b, 'two'), new SqlDeliveryQueue(b, 'three')];
    await dead.enqueue('e.u', 'p.u', event('e.u'), true);
    await dead.recordReply('e.u', 'p.u', 1, { message: { parts: [] } });
    expect((await dead.recordSend('e.u', 'p.u', 1, 'd1', { target: { type: 'group', id: 'g' } })).fresh).toBe(true);
    expect(await dead.recordSend('e.u', 'p.u', 1, 'd1', {})).toEqual({
      fresh: false,
      send: { n: 1, digest: 'd1', result: null, sent: false },
    });
    // Nobody else may claim them while the event's row is the recorder's.
    expect(await next.claimUnsent('reply', 'e.u', 'p.u')).toEqual([]);
    // Taken over: the new holder claims them, once, and a third process never does.
    await next.claim('p.u', 10, true);
    const [r1, r2] = await Promise.all([next.claimUnsent('reply', 'e.u', 'p.u'), other.claimUnsent('reply', 'e.u', 'p.u')]);
    expect([...r1, ...r2]).toEqual([{ n: 1, sequence: 1, request: { message: { parts: [] } } }]);
    expect(await next.claimUnsent('reply', 'e.u', 'p.u')).toEqual([]);
    expect(await next.claimUnsent('send', 'e.u', 'p.u', 1)).toEqual([
      { n: 1, sequence: null, request: { target: { type: 'group', id: 'g' } } },
    ]);
    await next.noteSend('e.u', 'p.u', 1, { accepted: true }, null);
    await next.noteReply('e.u', 'p.u', 1, { messageId: 'm' });
    expect((await next.recordSend('e.u', 'p.u', 1, 'd1', {})).send).toEqual({ n: 1, digest: 'd1', result: { accepted: true }, sent: true });
    expect((await next.replies('e.u', 'p.u'))[0]).toMatchObject({ sent: true });
  });

  it('announces new rows and outcomes to every replica', async () => {
    const one = new SqlDeliveryQueue(a, 'one');
    const two = new SqlDeliveryQueue(b, 'two');
    const seen: QueueNotice[] = [];
    const stop = await one.watch(
      (n) => seen.push(n),
      () => undefined,
    );
    try {
      await two.enqueue('e.n', 'p.n', event('e.n'));
      await two.claim('p.n', 1, false);
      await two.decide('e.n', 'p.n', 'one', { accepted: true, n: 1 });
      // The row as recorded (the first decision stays), with the replies given: the origin needs not read them.
      await two.finish('e.n', 'p.n', 'one', { accepted: true, n: 2 }, { error: null }, false, [{ messageId: 'm1' }]);
      // Too large for one notification: only the key, the origin reads the row.
      await two.enqueue('e.big', 'p.n', event('e.big'));
      await two.claim('p.n', 1, false);
      await two.finish('e.big', 'p.n', 'one', { accepted: true }, { error: null }, false, [{ text: 'x'.repeat(9000) }]);
      // A repeat of a final row changes nothing and tells nobody.
      expect(await two.finish('e.n', 'p.n', 'one', { accepted: false }, { error: null })).toBe(false);
      const deadline = Date.now() + 10_000;
      while (seen.length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(seen).toEqual([
        { k: 'new', p: 'p.n' },
        { k: 'decided', e: 'e.n', p: 'p.n', o: 'one', d: { accepted: true, n: 1 } },
        { k: 'done', e: 'e.n', p: 'p.n', o: 'one', d: { accepted: true, n: 1 }, c: { error: null }, r: [{ messageId: 'm1' }] },
        { k: 'new', p: 'p.n' },
        { k: 'done', e: 'e.big', p: 'p.n', o: 'one' },
      ]);
    } finally {
      await stop();
    }
  });

  it('prunes final rows beyond the newest it keeps, with their replies, never open ones', async () => {
    const q = new SqlDeliveryQueue(a, 'one');
    for (let i = 0; i < 5; i++) {
      await q.enqueue(`pr${i}`, 'p.prune', event(`pr${i}`), true);
      await q.recordReply(`pr${i}`, 'p.prune', 1);
      if (i < 4) await q.finish(`pr${i}`, 'p.prune', 'one', { accepted: true }, { error: null });
    }
    // Replies of an HTTP plugin (no queue row): kept while reply windows may be open, then pruned too.
    await q.recordReply('http-old', 'p.http', 1);
    await q.recordReply('http-new', 'p.http', 1);
    await a.query("UPDATE host_event_replies SET at = now() - interval '3 hours' WHERE event_id = 'http-old'");
    await q.prune(0);
    expect(await q.replies('http-old', 'p.http')).toEqual([]);
    expect((await q.replies('http-new', 'p.http')).length).toBe(1);
    const left = await a.query<{ event_id: string }>("SELECT event_id FROM host_event_queue WHERE plugin_id = 'p.prune' ORDER BY event_id");
    expect(left.map((r) => r.event_id)).toEqual(['pr4']);
    expect(await q.replies('pr0', 'p.prune')).toEqual([]);
    expect((await q.replies('pr4', 'p.prune')).length).toBe(1);
  });
});

describe("PostgreSQL's log", () => {
  it('holds no error after replicas raced for the same reply numbers: no expected path relies on a unique violation', async () => {
    // Two replicas numbering replies of the same events at once, over and over: they meet on (event, sequence).
    // (Earlier tests make statements fail on purpose: only what this one writes to the log counts.)
    const logStart = readFileSync(server.logFile, 'utf8').length;
    const one = new SqlDeliveryQueue(a, 'one');
    const two = new SqlDeliveryQueue(b, 'two');
    for (let round = 0; round < 20; round++) {
      const calls = Array.from({ length: 8 }, (_, i) => (i % 2 ? one : two).recordReply(`race${round}`, `p.race${i % 4}`, 1 + (i >> 2)));
      const recorded = await Promise.all(calls);
      expect(new Set(recorded.filter((r) => r.fresh).map((r) => r.reply.sequence)).size).toBe(recorded.filter((r) => r.fresh).length);
      const rows = await a.query<{ sequence: number }>('SELECT sequence FROM host_event_replies WHERE event_id = $1 ORDER BY sequence', [
        `race${round}`,
      ]);
      expect(rows.map((r) => r.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    }
    const log = readFileSync(server.logFile, 'utf8').slice(logStart);
    expect(log.split('\n').filter((l) => /\b(ERROR|FATAL|PANIC):/.test(l))).toEqual([]);
  });
});
