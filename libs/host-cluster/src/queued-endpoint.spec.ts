import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Delivery, PluginEndpoint } from '@host/host-core';
import { Dispatcher } from '@host/host-dispatch';
import { EmbeddedDatabase, migrate } from '@host/host-store';
import { contractRecord } from '@host/host-store/testing';
import { RUNTIME_DEFAULTS, type MessageEvent } from '@host/protocol';
import { QueuedEndpoints } from './queued-endpoint';
import { SqlDeliveryQueue } from './sql-delivery-queue';

const PLUGIN = 'com.example.elsewhere';
const TAKEOVER = 13_000;

// The origin's side alone, on the embedded database: this replica runs no plugin, so each event is queued for the
// holder, which a second queue object under another replica's name stands for. What the holder records reaches
// the origin through the queue's notifications, addressed to it.
describe('queued endpoints of plugins another replica runs', () => {
  let dir: string;
  let db: EmbeddedDatabase;
  let endpoints: QueuedEndpoints;
  let stopWatching: () => Promise<void>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'host-cluster-queued-'));
    db = await EmbeddedDatabase.open(join(dir, 'db'));
    await migrate(db);
    const queue = new SqlDeliveryQueue(db, 'origin');
    const dispatcher = new Dispatcher({ endpoints: () => endpoints.endpoints() });
    endpoints = new QueuedEndpoints({
      // This replica holds no lease: nothing is delivered here, so the worker is never asked to.
      leases: { replica: 'origin', shared: true, takeoverMilliseconds: TAKEOVER, localEndpoint: () => undefined, isAvailable: () => true },
      queue,
      worker: {
        deliver: () => {
          throw new Error('nothing is delivered on a replica that holds no lease');
        },
      },
      dispatcher: () => dispatcher,
    });
    stopWatching = await queue.watch(
      (n) => (n.k === 'decided' || n.k === 'done' ? endpoints.onOutcome(n) : undefined),
      () => void endpoints.recheck(0),
      (replica) => endpoints.hears(replica),
    );
  }, 60_000);

  afterAll(async () => {
    await stopWatching?.();
    await db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const event = (id: string) => ({ eventId: id }) as MessageEvent;
  const decision = { pluginId: PLUGIN, accepted: true, intercepted: false, error: null, durationMs: 2 };

  function endpoint(): PluginEndpoint {
    const record = contractRecord(PLUGIN, '1.0.0', { enabled: true });
    record.manifest = { ...record.manifest, eventSubscriptions: [{ eventType: 'message.created' }] };
    endpoints.sync(new Map([[PLUGIN, record]]));
    return [...endpoints.endpoints()][0]!;
  }

  /** The holder claims `eventId`'s row once it was written. */
  async function claimed(holder: SqlDeliveryQueue, eventId: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const rows = await holder.claim(PLUGIN, 10, false);
      if (rows.some((r) => r.eventId === eventId)) return;
      if (Date.now() > deadline) throw new Error(`${eventId} was never queued`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it("waits for the plugin's own limits plus a takeover, with the defaults of a manifest that sets none", () => {
    expect(endpoint().routing().concurrency).toEqual({
      maxConcurrentEvents: RUNTIME_DEFAULTS.maxConcurrentEvents + RUNTIME_DEFAULTS.queueCapacity,
      queueCapacity: RUNTIME_DEFAULTS.queueCapacity,
      overflowPolicy: 'reject',
      handlerDeadlineMilliseconds: RUNTIME_DEFAULTS.handlerDeadlineMilliseconds + TAKEOVER,
    });
    expect(endpoint().routing().requestTimeoutMilliseconds).toBe(RUNTIME_DEFAULTS.requestTimeoutMilliseconds + TAKEOVER);
  });

  it('queues the event and answers with the decision and completion the holder records', async () => {
    const holder = new SqlDeliveryQueue(db, 'holder');
    const delivery: Delivery = endpoint().deliver(event('e.remote'), { send: () => Promise.reject(new Error('not here')) });
    await claimed(holder, 'e.remote');
    await holder.decide('e.remote', PLUGIN, 'origin', decision);
    expect(await delivery.decision).toEqual(decision);
    await holder.finish('e.remote', PLUGIN, 'origin', decision, { error: null, durationMs: 7 }, false, []);
    expect(await delivery.completion).toEqual({ error: null, durationMs: 7 });
  });

  it('gives a row nobody claimed up when the origin stops waiting, so a holder taking it later does not deliver it', async () => {
    const delivery = endpoint().deliver(event('e.late'), { send: () => Promise.reject(new Error('not here')) });
    const queue = new SqlDeliveryQueue(db, 'reader');
    const deadline = Date.now() + 10_000;
    while (!(await queue.get('e.late', PLUGIN)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    delivery.cancel('ackTimeout');
    while ((await queue.get('e.late', PLUGIN))?.state !== 'done' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(await queue.get('e.late', PLUGIN)).toMatchObject({
      state: 'done',
      decision: { accepted: false, error: { code: 'delivery.timeout' } },
    });
    expect(await new SqlDeliveryQueue(db, 'holder').claim(PLUGIN, 10, true)).toEqual([]);
  });

  it('records a delivery a host alone made at once as one final row, claimed by it, written once', async () => {
    const alone = new SqlDeliveryQueue(db, 'alone');
    const plugin = 'com.example.alone';
    const completion = { error: null, durationMs: 3 };
    expect(await alone.recordDelivered('e-alone', plugin, event('e-alone'), decision, completion)).toBe(true);
    expect(await alone.get('e-alone', plugin)).toMatchObject({
      origin: 'alone',
      state: 'done',
      claimedBy: alone.claimer,
      attempts: 1,
      decision,
      completion,
    });
    // Nothing waits to be claimed, and a second record of the pair changes nothing.
    expect(await alone.claim(plugin, 10, true)).toEqual([]);
    expect(await alone.recordDelivered('e-alone', plugin, event('e-alone'), { ...decision, accepted: false }, completion)).toBe(false);
    expect((await alone.get('e-alone', plugin))!.decision).toEqual(decision);
  });
});
