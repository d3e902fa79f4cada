import type { EventLogStore, EventRecord } from '@host/host-core';
import { FileEventLogStore, MemoryEventLogStore } from '@host/host-store';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Dispatcher } from './dispatcher';
import { EventLog } from './event-log';
import { InProcessPlugin, KeepingProvider, makeEvent } from './in-process.spec-helper';

const text = (t: string) => ({ format: 'text' as const, parts: [{ type: 'text' as const, text: t }] });

describe('EventLog', () => {
  it('keeps 1,000 events in memory unless given a capacity or a store', () => {
    expect(new EventLog().capacity).toBe(1000);
    expect(new EventLog({ capacity: 7 }).capacity).toBe(7);
    const store = new MemoryEventLogStore({ capacity: 3 });
    expect(new EventLog({ store }).store).toBe(store);
  });

  it('tells its store about every new and changed record, but not about sends', () => {
    const calls: string[] = [];
    const inner = new MemoryEventLogStore();
    const store: EventLogStore = {
      capacity: inner.capacity,
      append: (r) => (calls.push(`append ${r.eventId}`), inner.append(r)),
      update: (r) => void calls.push(`update ${r.eventId}`),
      get: (id) => inner.get(id),
      list: (q) => inner.list(q),
      flush: async () => undefined,
      close: async () => undefined,
    };
    const log = new EventLog({ store });
    const record = { eventId: 'e1', recipients: [] } as unknown as EventRecord;
    log.add(record);
    for (const type of ['delivery', 'outbound', 'routed', 'completed'] as const) log.publish({ type, record });
    log.publish({ type: 'send', outbound: {} as never });
    expect(calls).toEqual(['append e1', 'update e1', 'update e1', 'update e1', 'update e1']);
    expect(log.get('e1')).toBe(record);
  });
});

describe('EventLog in a file store', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'event-log-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('finds the events of a host after its restart, with deliveries, replies and completion times; unfinished ones interrupted', async () => {
    const store = await FileEventLogStore.open(dir);
    let releaseSlow!: () => void;
    const echo = new InProcessPlugin(
      'com.a.echo',
      { permissions: ['messages.reply'] },
      async () => ({}),
      async (event, sink) => {
        await sink.send({ pluginId: 'com.a.echo', kind: 'reply', eventId: event.eventId, message: text('hi') });
        return { durationMs: 5 };
      },
    );
    const slow = new InProcessPlugin(
      'com.a.slow',
      {},
      async () => ({}),
      (event) => (event.message.content === '/slow' ? new Promise((r) => (releaseSlow = () => r({}))) : Promise.resolve({})),
    );
    const dispatcher = new Dispatcher({ endpoints: () => [echo, slow], events: new EventLog({ store }) });
    dispatcher.providers.register(new KeepingProvider());
    const done = await dispatcher.dispatch(makeEvent('hello'));
    await dispatcher.whenCompleted(done.eventId);
    const unfinished = await dispatcher.dispatch(makeEvent('/slow'));
    expect(done.completedAt).not.toBeNull();
    expect(unfinished.completedAt).toBeNull();
    // The host stops (or dies) while com.a.slow still works on its event.
    await store.close();

    const restarted = new Dispatcher({ endpoints: () => [], events: new EventLog({ store: await FileEventLogStore.open(dir) }) });
    expect(restarted.events.list().map((r) => r.eventId)).toEqual([unfinished.eventId, done.eventId]);
    const kept = restarted.events.get(done.eventId)!;
    expect(kept).toEqual(JSON.parse(JSON.stringify(done)));
    expect(kept.completedAt).toBe(done.completedAt);
    expect(kept.deliveries[0]).toMatchObject({ pluginId: 'com.a.echo', state: 'completed', completion: { error: null, durationMs: 5 } });
    expect(kept.outbound).toEqual([expect.objectContaining({ pluginId: 'com.a.echo', kind: 'reply', messageId: 'out-1' })]);
    const interrupted = restarted.events.get(unfinished.eventId)!;
    expect(interrupted.completedAt).not.toBeNull();
    expect(interrupted.deliveries.find((d) => d.pluginId === 'com.a.slow')).toMatchObject({
      state: 'interrupted',
      completion: { error: { code: 'delivery.interrupted' } },
    });
    await restarted.events.store.close();
    releaseSlow();
  });
});
