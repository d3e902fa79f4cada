import { useEmbeddedDatabase } from '@host/host-store/testing';
import { Dispatcher } from '@host/host-dispatch';
import type { MessageEvent } from '@host/protocol';
import { addressed, NOTICE_LIMIT, readNotice, recipientOf, type QueueNotice } from './queue-notices';
import { QueuedEndpoints } from './queued-endpoint';
import { SqlDeliveryQueue } from './sql-delivery-queue';

const decision = { pluginId: 'p.n', accepted: true, intercepted: false, error: null, durationMs: 1 };

describe('a queue notification addressed to one replica', () => {
  it('names its replica in its first characters, and reads back as the notification it carries', () => {
    const text = addressed('replica-2', { k: 'decided', e: 'e1', p: 'p.n', o: 'replica-2' }, { d: decision });
    expect(recipientOf(text)).toBe('replica-2');
    expect(readNotice(text)).toEqual({ k: 'decided', e: 'e1', p: 'p.n', o: 'replica-2', d: decision });
    // A name JSON must escape is read back as it was.
    expect(recipientOf(addressed('a"b\\c', { k: 'lease', p: 'p.n' }))).toBe('a"b\\c');
    // A notification for every replica names none.
    expect(recipientOf(JSON.stringify({ k: 'new', p: 'p.n' }))).toBeUndefined();
  });

  it('leaves its optional parts out when they would not fit in one notification', () => {
    const text = addressed(
      'one',
      { k: 'decided', e: 'e1', p: 'p.n', o: 'one' },
      { d: { ...decision, notice: { code: 'x', message: 'y'.repeat(NOTICE_LIMIT) } } },
    );
    expect(readNotice(text)).toEqual({ k: 'decided', e: 'e1', p: 'p.n', o: 'one' });
  });

  it('is skipped without being parsed by a replica it is not for', () => {
    const parse = jest.spyOn(JSON, 'parse');
    try {
      const text = addressed('two', { k: 'control', p: 'p.n', to: 'two', action: 'restart' });
      expect(readNotice(text, (r) => r === 'one')).toBeUndefined();
      expect(parse).not.toHaveBeenCalled();
      expect(readNotice(text, (r) => r === 'two')).toEqual({ k: 'control', p: 'p.n', to: 'two', action: 'restart' });
    } finally {
      parse.mockRestore();
    }
  });
});

// The queue's notifications on the embedded database, as a replica's listener gets them.
describe('the queue channel', () => {
  const embedded = useEmbeddedDatabase('host-cluster-notices-');
  const db = () => embedded.db();

  const event = (id: string) => ({ eventId: id }) as MessageEvent;

  it("brings a replica the notifications for every replica and its own, and never parses another replica's", async () => {
    const one = new SqlDeliveryQueue(db(), 'one');
    const holder = new SqlDeliveryQueue(db(), 'holder');
    const seen: QueueNotice[] = [];
    const parse = jest.spyOn(JSON, 'parse');
    const stop = await one.watch(
      (n) => seen.push(n),
      () => undefined,
      (replica) => replica === 'one',
    );
    try {
      // Rows queued by `one` and by `two`, delivered by the holder, which tells each origin.
      await one.enqueue('e.one', 'p.n', event('e.one'));
      await new SqlDeliveryQueue(db(), 'two').enqueue('e.two', 'p.n', event('e.two'));
      await holder.claim('p.n', 10, false);
      await holder.decide('e.two', 'p.n', 'two', decision);
      await holder.decide('e.one', 'p.n', 'one', decision);
      await holder.finish('e.two', 'p.n', 'two', decision, { error: null }, false, []);
      await holder.finish('e.one', 'p.n', 'one', decision, { error: null }, false, []);
      await holder.control('p.n', 'two', 'restart', { id: 'a1', from: 'holder' });
      await holder.answer('p.n', 'two', 'a1', null);
      // Last, for every replica: once it is here, everything before it was.
      await holder.enqueue('e.last', 'p.last', event('e.last'));
      const deadline = Date.now() + 10_000;
      while (!seen.some((n) => n.k === 'new' && n.p === 'p.last') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(seen).toEqual([
        { k: 'new', p: 'p.n' },
        { k: 'new', p: 'p.n' },
        { k: 'decided', e: 'e.one', p: 'p.n', o: 'one', d: decision },
        { k: 'done', e: 'e.one', p: 'p.n', o: 'one', d: decision, c: { error: null }, r: [] },
        { k: 'new', p: 'p.last' },
      ]);
      const parsedForTwo = parse.mock.calls.filter(([text]) => typeof text === 'string' && text.includes('"two"'));
      expect(parsedForTwo).toEqual([]);
    } finally {
      parse.mockRestore();
      await stop();
    }
  });

  it('reaches a replica that took over the events of a gone one: what is announced to the gone one is read there', async () => {
    const gone = new SqlDeliveryQueue(db(), 'gone');
    await gone.enqueue('e.adopted', 'p.adopted', event('e.adopted'));
    const dispatcher = new Dispatcher({ endpoints: () => [] });
    const endpoints = new QueuedEndpoints({
      leases: {
        replica: 'heir',
        shared: true,
        takeoverMilliseconds: 1_000,
        localEndpoint: () => undefined,
        isAvailable: () => true,
      },
      queue: new SqlDeliveryQueue(db(), 'heir'),
      worker: { deliver: () => undefined },
      dispatcher: () => dispatcher,
    });
    expect(endpoints.hears('heir')).toBe(true);
    expect(endpoints.hears('gone')).toBe(false);
    await endpoints.adopt([event('e.adopted')]);
    expect(endpoints.hears('gone')).toBe(true);
    expect(endpoints.hears('elsewhere')).toBe(false);
  });
});
