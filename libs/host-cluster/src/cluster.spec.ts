import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostPaths } from '@host/host-core';
import { Dispatcher, type OutboundRecord } from '@host/host-dispatch';
import { FilePluginLogStore, StdioPluginRuntime } from '@host/host-runtime';
import { openSqlStores, type SqlStores } from '@host/host-store';
import { contractRecord } from '@host/host-store/testing';
import type { EventRecord } from '@host/host-core';
import type { MessageEvent } from '@host/protocol';
import { Cluster } from './cluster';
import { SqlDeliveryQueue } from './sql-delivery-queue';
import { SqlLeases } from './sql-leases';

const PLUGIN = 'com.example.resumed';

function messageEvent(eventId: string): MessageEvent {
  return {
    eventId,
    eventType: 'message.created',
    timestamp: new Date().toISOString(),
    source: 'console',
    bot: { botAccountId: 'console-bot', platform: 'console' },
    conversation: { type: 'group', conversationId: 'room' },
    sender: { provider: 'console', mentionId: 'u1' },
    message: { id: `m-${eventId}`, content: '/echo hi', attachments: [], mentions: [] },
    messageReference: { messageId: `m-${eventId}`, targetType: 'group', targetId: 'room', restrictions: [] },
  };
}

// A host alone on its embedded database, started again after a crash. Its previous process (same replica name,
// another claimer) delivered an event and recorded its reply and outcome, then died before it logged the event
// final, so the event is routed again. That row was finished under the origin's own name, so no notification was
// ever sent for it: the new process must read it when it finds the row queued already, not wait for a lease round.
describe('an event routed again whose row an earlier process of the replica finished', () => {
  let dir: string;
  let stores: SqlStores;
  let cluster: Cluster;
  let runtime: StdioPluginRuntime;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'host-cluster-spec-'));
    stores = await openSqlStores(hostPaths(dir));
  }, 60_000);

  afterAll(async () => {
    await cluster?.close();
    await stores?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is answered from the row with the reply the earlier process sent, without a lease round', async () => {
    const event = messageEvent('ev-resumed');
    const before = new SqlDeliveryQueue(stores.db, 'host', 'host/earlier');
    const queue = new SqlDeliveryQueue(stores.db, 'host');
    expect(await before.enqueue(event.eventId, PLUGIN, event, true)).toBe(true);
    await before.recordReply(event.eventId, PLUGIN, 1, { message: 'hi' });
    const sent: OutboundRecord = {
      pluginId: PLUGIN,
      kind: 'reply',
      eventId: event.eventId,
      target: { type: 'group', id: 'room' },
      body: { content: 'hi' },
      at: new Date().toISOString(),
      error: null,
    } as OutboundRecord;
    await before.noteReply(event.eventId, PLUGIN, 1, sent);
    const decision = { pluginId: PLUGIN, accepted: true, intercepted: false, error: null, durationMs: 3 };
    expect(await before.finish(event.eventId, PLUGIN, 'host', decision, { error: null, durationMs: 5 })).toBe(true);

    // The new process: one lease round at its opening (it makes the plugin's endpoint) and none after it.
    const record = contractRecord(PLUGIN, '1.0.0', { enabled: true });
    record.manifest = { ...record.manifest, eventSubscriptions: [{ eventType: 'message.created' }] };
    await stores.registry.put(record);
    const dispatcher: Dispatcher = new Dispatcher({ endpoints: () => cluster.endpoints() });
    cluster = new Cluster({
      replica: 'host',
      leases: new SqlLeases(stores.db, 'host'),
      queue,
      store: stores.registry,
      dispatcher: () => dispatcher,
      invalid: () => [],
      log: () => undefined,
      shared: false,
      timings: { renewMilliseconds: 3_600_000, ttlMilliseconds: 3_600_000 },
    });
    runtime = new StdioPluginRuntime({
      paths: hostPaths(dir),
      records: stores.registry,
      logs: new FilePluginLogStore(hostPaths(dir)),
      sink: dispatcher.outbound,
    });
    cluster.attach(runtime);
    await cluster.open();
    expect([...cluster.endpoints()].map((e) => e.pluginId)).toEqual([PLUGIN]);

    cluster.resuming([event.eventId]);
    const completed = new Promise<EventRecord>((resolve) =>
      dispatcher.events.subscribe((u) => u.type === 'completed' && u.record.eventId === event.eventId && resolve(u.record)),
    );
    dispatcher.resume([event]);
    const logged = await completed;
    expect(logged?.deliveries).toEqual([expect.objectContaining({ pluginId: PLUGIN, state: 'completed', accepted: true })]);
    expect(logged?.outbound).toEqual([expect.objectContaining({ pluginId: PLUGIN, body: { content: 'hi' } })]);
    // Not delivered again: the row is the earlier process's, claimed once.
    expect(await queue.get(event.eventId, PLUGIN)).toMatchObject({ state: 'done', claimedBy: 'host/earlier', attempts: 1 });
  }, 20_000);
});
