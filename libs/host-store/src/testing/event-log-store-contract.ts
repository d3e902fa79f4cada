import type { DeliveryRecord, EventLogStore, EventRecord } from '@host/host-core';

/** How the contract suite gets stores of the implementation under test. */
export interface EventLogStoreHarness {
  /** A new, empty store keeping `capacity` events (called at most once per test). */
  open(capacity: number): Promise<EventLogStore>;
  /**
   * The same storage opened again after `close()`, as a restarted host would,
   * keeping `capacity` events. Leave it out for stores that keep nothing.
   */
  reopen?(capacity: number): Promise<EventLogStore>;
  /** Removes what `open` created (called after each test, after the stores are closed). */
  cleanup?(): Promise<void>;
}

/** An event record as the dispatcher starts one; the suite's fixture. */
export function contractEvent(eventId: string, recipients: string[] = []): EventRecord {
  return {
    eventId,
    source: 'console',
    receivedAt: '2026-01-01T00:00:00.000Z',
    routedAt: null,
    completedAt: null,
    event: {
      eventId,
      source: 'console',
      message: { content: `text of ${eventId}` },
      messageReference: { targetType: 'group', targetId: 'g1', messageId: `m-${eventId}` },
    } as unknown as EventRecord['event'],
    recipients,
    deliveries: [],
    outbound: [],
    interceptedBy: null,
    replySequence: 0,
  };
}

/** A delivery in the given state, as the dispatcher would have left it. */
export function contractDelivery(pluginId: string, state: DeliveryRecord['state']): DeliveryRecord {
  const decided = state !== 'queued' && state !== 'sent';
  const accepted = state === 'running' || state === 'completed';
  return {
    pluginId,
    transport: 'stdio-jsonrpc',
    startedAt: '2026-01-01T00:00:00.000Z',
    state,
    sent: state !== 'queued',
    done: decided,
    accepted,
    intercepted: false,
    error: state === 'failed' ? { code: 'delivery.timeout', message: 'no answer' } : null,
    durationMs: decided ? 3 : null,
    completion: state === 'completed' ? { at: '2026-01-01T00:00:01.000Z', error: null, durationMs: 900 } : null,
  };
}

const ids = (store: EventLogStore) => store.list({ limit: 100_000 }).map((r) => r.eventId);

/**
 * The behaviour every `EventLogStore` must have, as a Jest suite. Run it from
 * the implementation's spec:
 *
 * ```ts
 * describeEventLogStoreContract('FileEventLogStore', { open: ..., reopen: ..., cleanup: ... });
 * ```
 */
export function describeEventLogStoreContract(name: string, harness: EventLogStoreHarness): void {
  describe(`${name} (EventLogStore contract)`, () => {
    const opened: EventLogStore[] = [];
    const open = async (capacity = 10) => {
      const s = await harness.open(capacity);
      opened.push(s);
      return s;
    };
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
      await harness.cleanup?.();
    });

    it('answers appended records by id and newest first, filtered by plugin and limited', async () => {
      const store = await open();
      store.append(contractEvent('a', ['com.example.one']));
      store.append(contractEvent('b', ['com.example.two']));
      store.append(contractEvent('c', ['com.example.one', 'com.example.two']));
      expect(store.get('b')?.eventId).toBe('b');
      expect(store.get('missing')).toBeUndefined();
      expect(ids(store)).toEqual(['c', 'b', 'a']);
      expect(store.list({ pluginId: 'com.example.one' }).map((r) => r.eventId)).toEqual(['c', 'a']);
      expect(store.list({ limit: 2 }).map((r) => r.eventId)).toEqual(['c', 'b']);
    });

    it('lists 100 records unless asked for another number', async () => {
      const store = await open(150);
      for (let i = 0; i < 120; i++) store.append(contractEvent(`e${i}`));
      expect(store.list()).toHaveLength(100);
      expect(store.list()[0]?.eventId).toBe('e119');
    });

    it('keeps the object it was given, so changes made to it are what get and list answer', async () => {
      const store = await open();
      const record = contractEvent('a', ['com.example.one']);
      store.append(record);
      record.deliveries.push(contractDelivery('com.example.one', 'running'));
      store.update(record);
      expect(store.get('a')).toBe(record);
      expect(store.list()[0]).toBe(record);
    });

    it('forgets the oldest events beyond its capacity, over many rounds', async () => {
      const store = await open(3);
      expect(store.capacity).toBe(3);
      for (let i = 0; i < 20; i++) store.append(contractEvent(`e${i}`));
      expect(ids(store)).toEqual(['e19', 'e18', 'e17']);
      expect(store.get('e16')).toBeUndefined();
      expect(store.get('e17')?.eventId).toBe('e17');
    });

    it('gives an event appended again the newest place, so it is forgotten last', async () => {
      const store = await open(3);
      ['a', 'b', 'c'].forEach((id) => store.append(contractEvent(id)));
      const again = contractEvent('a');
      store.append(again);
      expect(ids(store)).toEqual(['a', 'c', 'b']);
      store.append(contractEvent('d'));
      expect(ids(store)).toEqual(['d', 'a', 'c']);
      expect(store.get('a')).toBe(again);
      store.append(contractEvent('e'));
      store.append(contractEvent('f'));
      expect(ids(store)).toEqual(['f', 'e', 'd']);
    });

    it('ignores updates of records it does not keep', async () => {
      const store = await open(2);
      const first = contractEvent('a');
      store.append(first);
      store.append(contractEvent('b'));
      store.append(contractEvent('c'));
      store.update(first);
      store.update(contractEvent('never'));
      expect(ids(store)).toEqual(['c', 'b']);
      await store.flush();
    });

    it('keeps at least one event', async () => {
      const store = await open(0);
      store.append(contractEvent('a'));
      store.append(contractEvent('b'));
      expect(ids(store)).toEqual(['b']);
    });

    it('goes on answering after close, and takes appends without storing them', async () => {
      const store = await open();
      store.append(contractEvent('a'));
      await store.close();
      store.append(contractEvent('b'));
      store.update(store.get('a')!);
      expect(ids(store)).toEqual(['b', 'a']);
      await store.flush();
      await store.close();
    });

    if (harness.reopen) {
      const reopen = async (capacity = 10) => {
        const s = await harness.reopen!(capacity);
        opened.push(s);
        return s;
      };

      it('keeps events across close and reopen, with their deliveries, completion times and outbound messages', async () => {
        const store = await open();
        const a = contractEvent('a', ['com.example.one', 'com.example.two']);
        store.append(a);
        store.append(contractEvent('b'));
        a.deliveries.push(contractDelivery('com.example.one', 'completed'), contractDelivery('com.example.two', 'failed'));
        a.outbound.push({
          pluginId: 'com.example.one',
          kind: 'reply',
          eventId: 'a',
          target: { type: 'group', id: 'g1' },
          body: { content: 'hi' },
          messageId: 'out-1',
          at: '2026-01-01T00:00:00.500Z',
          error: null,
        });
        a.replySequence = 1;
        a.routedAt = '2026-01-01T00:00:00.010Z';
        store.update(a);
        a.completedAt = '2026-01-01T00:00:01.000Z';
        store.update(a);
        const expected = structuredClone(a);
        await store.close();

        const again = await reopen();
        expect(ids(again)).toEqual(['b', 'a']);
        expect(again.get('a')).toEqual(expected);
        expect(again.list({ pluginId: 'com.example.two' }).map((r) => r.eventId)).toEqual(['a']);
      });

      it('goes on writing after a record that cannot be serialised: later records and updates survive a reopen', async () => {
        const store = await open();
        store.append(contractEvent('before'));
        await store.flush();
        // A payload nested past the stack of JSON.stringify: the record stays readable in memory, but no write can carry it.
        let nested: unknown[] = [];
        for (let i = 0; i < 20_000; i++) nested = [nested];
        const poison = contractEvent('poison');
        (poison.event as unknown as { rawPayload: unknown }).rawPayload = nested;
        store.append(poison);
        store.append(contractEvent('after'));
        await store.flush().catch(() => undefined);
        expect(ids(store)).toEqual(['after', 'poison', 'before']);
        const later = contractEvent('later', ['com.example.one']);
        store.append(later);
        await store.flush();
        later.deliveries.push(contractDelivery('com.example.one', 'completed'));
        later.completedAt = '2026-01-01T00:00:03.000Z';
        store.update(later);
        poison.completedAt = '2026-01-01T00:00:03.000Z';
        store.update(poison);
        await store.close();

        const again = await reopen();
        expect(ids(again)).toEqual(['later', 'after', 'before']);
        expect(again.get('later')).toMatchObject({ completedAt: '2026-01-01T00:00:03.000Z', deliveries: [{ state: 'completed' }] });
        again.append(contractEvent('next'));
        await again.close();
        expect(ids(await reopen())).toEqual(['next', 'later', 'after', 'before']);
      });

      it('keeps what changed after the last flush too: close writes it', async () => {
        const store = await open();
        const a = contractEvent('a', ['com.example.one']);
        store.append(a);
        await store.flush();
        a.deliveries.push(contractDelivery('com.example.one', 'completed'));
        a.routedAt = a.completedAt = '2026-01-01T00:00:02.000Z';
        store.update(a);
        await store.close();
        expect((await reopen()).get('a')).toMatchObject({ completedAt: '2026-01-01T00:00:02.000Z', deliveries: [{ state: 'completed' }] });
      });

      it('marks deliveries a stopped host left unfinished as interrupted, and completes their event', async () => {
        const store = await open();
        const a = contractEvent('a', ['com.example.q', 'com.example.s', 'com.example.r', 'com.example.d']);
        a.deliveries.push(
          contractDelivery('com.example.q', 'queued'),
          contractDelivery('com.example.s', 'sent'),
          contractDelivery('com.example.r', 'running'),
          contractDelivery('com.example.d', 'completed'),
        );
        store.append(a);
        const done = contractEvent('done', ['com.example.d']);
        done.deliveries.push(contractDelivery('com.example.d', 'completed'));
        done.routedAt = '2026-01-01T00:00:00.010Z';
        done.completedAt = '2026-01-01T00:00:01.000Z';
        store.append(done);
        const before = Date.now();
        await store.close();

        const again = await reopen();
        const loaded = again.get('a')!;
        expect(loaded.deliveries.map((d) => d.state)).toEqual(['interrupted', 'interrupted', 'interrupted', 'completed']);
        const [queued, sent, running, completed] = loaded.deliveries;
        for (const d of [queued, sent])
          expect(d).toMatchObject({ done: true, accepted: false, error: { code: 'delivery.interrupted' }, completion: null });
        expect(running).toMatchObject({
          accepted: true,
          error: null,
          completion: { error: { code: 'delivery.interrupted' }, durationMs: null },
        });
        expect(completed).toEqual(contractDelivery('com.example.d', 'completed'));
        expect(Date.parse(loaded.completedAt!)).toBeGreaterThanOrEqual(before - 1000);
        expect(loaded.routedAt).not.toBeNull();
        // A finished event is left as it was.
        expect(again.get('done')).toEqual(done);
      });

      it('keeps only the newest events across reopen, in their order, also when opened with a smaller capacity', async () => {
        const store = await open(5);
        for (let i = 0; i < 12; i++) store.append(contractEvent(`e${i}`));
        store.append(contractEvent('e9'));
        await store.close();
        const again = await reopen(5);
        expect(ids(again)).toEqual(['e9', 'e11', 'e10', 'e8', 'e7']);
        await again.close();
        const smaller = await reopen(2);
        expect(ids(smaller)).toEqual(['e9', 'e11']);
        smaller.append(contractEvent('new'));
        expect(ids(smaller)).toEqual(['new', 'e9']);
      });

      it('does not keep what was appended after close', async () => {
        const store = await open();
        store.append(contractEvent('a'));
        await store.close();
        store.append(contractEvent('late'));
        expect(ids(await reopen())).toEqual(['a']);
      });
    }
  });
}
