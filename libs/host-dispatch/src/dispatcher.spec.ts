import type { MessageEvent } from '@host/protocol';
import type { PluginEndpoint } from '@host/host-core';
import { Dispatcher } from './dispatcher';
import { EventLog, type EventLogUpdate } from './event-log';
import { InProcessPlugin, KeepingProvider, makeEvent, until } from './in-process.spec-helper';

function setup(plugins: PluginEndpoint[], options: { requestTimeoutMilliseconds?: number; maxWaitingEvents?: number } = {}) {
  const provider = new KeepingProvider();
  const dispatcher = new Dispatcher({ endpoints: () => plugins, ...options });
  dispatcher.providers.register(provider);
  return { dispatcher, provider };
}

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

describe('Dispatcher routing', () => {
  it('delivers matched commands by priority, then observers, ties by pluginId', async () => {
    const order: string[] = [];
    const track = (id: string) => async () => {
      order.push(id);
      return {};
    };
    const plugins = [
      new InProcessPlugin('com.z.observer', {}, track('com.z.observer')),
      new InProcessPlugin('com.a.observer', {}, track('com.a.observer')),
      new InProcessPlugin('com.b.low', { commands: [{ name: 'echo', priority: 1 }] }, track('com.b.low')),
      new InProcessPlugin('com.c.high', { commands: [{ name: 'echo', aliases: ['e'], priority: 9 }] }, track('com.c.high')),
      new InProcessPlugin('com.a.low', { commands: [{ name: 'echo', priority: 1 }] }, track('com.a.low')),
      new InProcessPlugin('com.d.other', { commands: [{ name: 'weather', priority: 100 }] }, track('com.d.other')),
    ];
    const { dispatcher } = setup(plugins);
    const record = await dispatcher.dispatch(makeEvent('/echo hi'));
    expect(order).toEqual(['com.c.high', 'com.a.low', 'com.b.low', 'com.a.observer', 'com.d.other', 'com.z.observer']);
    expect(record.recipients).toEqual(order);
    expect(plugins[3]!.received[0]!.command).toEqual({ name: 'echo', word: 'echo', prefix: '/', args: 'hi' });
    expect((plugins[0] as InProcessPlugin).received[0]!.command).toBeUndefined();
  });

  it('stops at the plugin that intercepts', async () => {
    const first = new InProcessPlugin('com.a.first', { canIntercept: true, commands: [{ name: 'stop', priority: 5 }] }, async () => ({
      intercepted: true,
    }));
    const later = new InProcessPlugin('com.b.later', {});
    const { dispatcher } = setup([first, later]);
    const record = await dispatcher.dispatch(makeEvent('/stop'));
    expect(later.received).toHaveLength(0);
    expect(record.interceptedBy).toBe('com.a.first');
    expect(record.deliveries.map((d) => d.pluginId)).toEqual(['com.a.first']);
  });

  it('applies subscription filters and skips unavailable plugins', async () => {
    const otherBot = new InProcessPlugin('com.a.bot', { eventSubscriptions: [{ eventType: 'message.created', botAccountIds: ['bot-2'] }] });
    const thisGroup = new InProcessPlugin('com.b.group', {
      eventSubscriptions: [{ eventType: 'message.created', conversationIds: ['group-1'] }],
    });
    const down = new InProcessPlugin('com.c.down', {});
    down.available = false;
    const { dispatcher } = setup([otherBot, thisGroup, down]);
    expect((await dispatcher.dispatch(makeEvent('hello'))).recipients).toEqual(['com.b.group']);
  });

  it('waits for an interceptor before the next plugin', async () => {
    const gate = deferred();
    const slow = new InProcessPlugin('com.a.slow', { canIntercept: true }, async () => {
      await gate.promise;
      return {};
    });
    const next = new InProcessPlugin('com.b.next', {});
    const { dispatcher } = setup([slow, next]);
    const done = dispatcher.dispatch(makeEvent('hi'));
    await new Promise((r) => setTimeout(r, 20));
    expect(next.received).toHaveLength(0);
    gate.resolve();
    await done;
    expect(next.received).toHaveLength(1);
  });

  it('hands the event to every plugin that cannot intercept at once, in order', async () => {
    const gate = deferred();
    const slow = new InProcessPlugin('com.a.slow', { commands: [{ name: 'ask' }] }, async () => {
      await gate.promise;
      return {};
    });
    const observers = ['com.b.one', 'com.c.two', 'com.d.three'].map((id) => new InProcessPlugin(id, {}));
    const { dispatcher } = setup([slow, ...observers]);
    const done = dispatcher.dispatch(makeEvent('/ask something slow'));
    await until(() => observers.every((o) => o.received.length > 0), 'every observer got the event');
    expect(observers.map((o) => o.received.length)).toEqual([1, 1, 1]);
    gate.resolve();
    const record = await done;
    expect(record.deliveries.map((d) => d.pluginId)).toEqual(['com.a.slow', 'com.b.one', 'com.c.two', 'com.d.three']);
  });

  it('after a passing interceptor, hands the event to the rest at once', async () => {
    const order: string[] = [];
    const plugins = [
      new InProcessPlugin('com.a.guard', { canIntercept: true, commands: [{ name: 'ask', priority: 9 }] }, async () => {
        order.push('guard');
        return { intercepted: false };
      }),
      new InProcessPlugin('com.b.watch', {}, async () => {
        order.push('watch');
        return {};
      }),
    ];
    const record = await setup(plugins).dispatcher.dispatch(makeEvent('/ask'));
    expect(order).toEqual(['guard', 'watch']);
    expect(record.interceptedBy).toBeNull();
  });

  it('ignores intercepted: true from a plugin that did not declare interception', async () => {
    const rogue = new InProcessPlugin('com.a.rogue', { commands: [{ name: 'stop', priority: 5 }] }, async () => ({ intercepted: true }));
    const later = new InProcessPlugin('com.b.later', {});
    const record = await setup([rogue, later]).dispatcher.dispatch(makeEvent('/stop'));
    expect(later.received).toHaveLength(1);
    expect(record.interceptedBy).toBeNull();
    expect(record.deliveries[0]).toMatchObject({ accepted: true, intercepted: false });
  });

  it('records a missing ACK as delivery.timeout, cancels it at the plugin and moves on', async () => {
    const silent = new InProcessPlugin('com.a.silent', { canIntercept: true }, () => new Promise(() => undefined));
    const next = new InProcessPlugin('com.b.next', {});
    const { dispatcher } = setup([silent, next], { requestTimeoutMilliseconds: 30 });
    const record = await dispatcher.dispatch(makeEvent('hi'));
    expect(record.deliveries[0]!.error).toEqual({ code: 'delivery.timeout', message: 'com.a.silent did not acknowledge within 30 ms' });
    expect(record.deliveries[0]!.state).toBe('failed');
    expect(silent.cancelled).toEqual([{ eventId: record.eventId, reason: 'ackTimeout' }]);
    expect(record.deliveries[1]).toMatchObject({ pluginId: 'com.b.next', accepted: true, error: null });
  });

  it('records a transport failure as delivery.failed', async () => {
    const broken = new InProcessPlugin('com.a.broken', {}, async () => {
      throw new Error('socket hang up');
    });
    const { dispatcher } = setup([broken]);
    const record = await dispatcher.dispatch(makeEvent('hi'));
    expect(record.deliveries[0]!.error).toEqual({ code: 'delivery.failed', message: 'socket hang up' });
  });
});

describe('Dispatcher queues', () => {
  const busy = (policy: 'reject' | 'dropOldest') => {
    const gate = deferred();
    const plugin = new InProcessPlugin(
      'com.a.busy',
      { concurrency: { maxConcurrentEvents: 1, queueCapacity: 1, overflowPolicy: policy, handlerDeadlineMilliseconds: 60_000 } },
      async () => {
        await gate.promise;
        return {};
      },
    );
    return { plugin, gate };
  };

  it('keeps accepting events for a busy plugin beyond its queue capacity: its backlog is bounded by time, not refused for everyone', async () => {
    const { plugin, gate } = busy('reject');
    const { dispatcher } = setup([plugin]);
    const records = [1, 2, 3, 4].map((n) => dispatcher.dispatch(makeEvent(String(n))));
    expect(dispatcher.refusals).toEqual({ hostBacklog: 0 });
    expect(dispatcher.queueStats()).toEqual([
      { pluginId: 'com.a.busy', active: 1, waiting: 3, oldestWaitMilliseconds: expect.any(Number), expired: 0, dropped: 0 },
    ]);
    gate.resolve();
    const done = await Promise.all(records);
    expect(done.map((r) => r.deliveries[0]!.error)).toEqual([null, null, null, null]);
    expect(plugin.received.map((e) => e.message.content)).toEqual(['1', '2', '3', '4']);
  });

  it("counts a delivery routed through a queued endpoint and delivered directly here once among its plugin's active ones", async () => {
    const { plugin, gate } = busy('reject');
    const endpoints: PluginEndpoint[] = [];
    const dispatcher = new Dispatcher({ endpoints: () => endpoints });
    // Routes as the durable queue's endpoint does: a wide pass-through queue, the plugin's own limits where it runs.
    const queued: PluginEndpoint = {
      pluginId: plugin.pluginId,
      transport: 'stdio-jsonrpc',
      routing: () => ({
        ...plugin.routing(),
        concurrency: { maxConcurrentEvents: 100, queueCapacity: 100, overflowPolicy: 'reject', handlerDeadlineMilliseconds: 60_000 },
      }),
      isAvailable: () => true,
      deliver: (event) => {
        const handed = dispatcher.deliverDirect(plugin, event);
        return {
          decision: handed.decided,
          completion: handed.finished.then(() => ({ error: null })),
          cancel: () => undefined,
        };
      },
    };
    endpoints.push(queued);
    const records = [1, 2, 3].map((n) => dispatcher.dispatch(makeEvent(String(n))));
    await new Promise((r) => setImmediate(r));
    expect(dispatcher.queueStats()).toEqual([expect.objectContaining({ pluginId: 'com.a.busy', active: 1, waiting: 2 })]);
    gate.resolve();
    await Promise.all(records);
  });

  it('refuses an event before accepting it past the host-wide bound, and records nothing of it', async () => {
    const { plugin, gate } = busy('reject');
    const { dispatcher } = setup([plugin], { maxWaitingEvents: 1 });
    const records = [dispatcher.dispatch(makeEvent('1')), dispatcher.dispatch(makeEvent('2'))];
    const third = makeEvent('3');
    await expect(dispatcher.dispatch(third)).rejects.toMatchObject({ code: 'EVENTS_OVERLOADED', status: 503 });
    expect(dispatcher.events.get(third.eventId)).toBeUndefined();
    expect(dispatcher.refusals).toEqual({ hostBacklog: 1 });
    gate.resolve();
    await Promise.all(records);
  });

  it('refuses new events past the host-wide bound of waiting deliveries', async () => {
    const gate = deferred();
    const slow = new InProcessPlugin(
      'com.a.slow',
      { concurrency: { maxConcurrentEvents: 1, queueCapacity: 100, overflowPolicy: 'reject', handlerDeadlineMilliseconds: 60_000 } },
      async () => {
        await gate.promise;
        return {};
      },
    );
    const { dispatcher } = setup([slow], { maxWaitingEvents: 2 });
    const accepted = [1, 2, 3].map((n) => dispatcher.dispatch(makeEvent(String(n))));
    expect(dispatcher.waitingEvents()).toBe(2);
    expect(dispatcher.admit(makeEvent('4'))).toMatchObject({ accepted: false, refusal: { code: 'EVENTS_OVERLOADED' } });
    expect(dispatcher.refusals.hostBacklog).toBe(1);
    gate.resolve();
    const records = await Promise.all(accepted);
    expect(records.map((r) => r.deliveries[0]!.error)).toEqual([null, null, null]);
    expect(slow.received.map((e) => e.message.content)).toEqual(['1', '2', '3']);
  });

  it('expires a waiting event when its reply window closes, as a final state of its own', async () => {
    const { plugin, gate } = busy('reject');
    const { dispatcher } = setup([plugin]);
    const first = dispatcher.dispatch(makeEvent('1'));
    const late = makeEvent('2');
    late.messageReference.replyUntil = new Date(Date.now() + 50).toISOString();
    const record = await dispatcher.dispatch(late);
    expect(record.deliveries[0]).toMatchObject({
      state: 'expired',
      sent: false,
      accepted: false,
      error: { code: 'delivery.expired', message: expect.stringContaining('com.a.busy') },
    });
    expect(dispatcher.queueStats()[0]).toMatchObject({ waiting: 0, expired: 1 });
    gate.resolve();
    await first;
    expect(plugin.received.map((e) => e.message.content)).toEqual(['1']);
  });

  it('holds the events of a plugin that is starting until it runs, instead of failing them', async () => {
    const starting = new InProcessPlugin('com.a.starting', {});
    starting.available = false;
    starting.starting = true;
    const stopped = new InProcessPlugin('com.b.stopped', {});
    stopped.available = false;
    const { dispatcher } = setup([starting, stopped]);
    const routed = dispatcher.dispatch(makeEvent('hello'));
    await new Promise((r) => setTimeout(r, 300));
    expect(starting.received).toHaveLength(0);
    expect(dispatcher.queueStats()).toEqual([expect.objectContaining({ pluginId: 'com.a.starting', waiting: 1 })]);
    starting.available = true;
    starting.starting = false;
    const record = await routed;
    expect(record.recipients).toEqual(['com.a.starting']);
    expect(record.deliveries[0]).toMatchObject({ sent: true, accepted: true, error: null });
  });

  it('records a failed plugin as a recipient that missed the event (delivery.unavailable), not as no recipient', async () => {
    const failed = new InProcessPlugin('com.a.failed', {});
    failed.available = false;
    failed.down = true;
    const { dispatcher } = setup([failed]);
    const record = await dispatcher.dispatch(makeEvent('hello'));
    expect(record.recipients).toEqual(['com.a.failed']);
    expect(record.deliveries[0]).toMatchObject({ state: 'failed', error: { code: 'delivery.unavailable' } });
    expect(failed.received).toHaveLength(0);
  });

  it('fails the deliveries of a plugin that is not running beyond its queue capacity, without refusing the event for others', async () => {
    const restarting = new InProcessPlugin('com.a.restarting', {
      concurrency: { maxConcurrentEvents: 1, queueCapacity: 2, overflowPolicy: 'reject', handlerDeadlineMilliseconds: 60_000 },
    });
    restarting.available = false;
    restarting.starting = true;
    const other = new InProcessPlugin('com.b.other', {});
    const { dispatcher } = setup([restarting, other]);
    const held = [dispatcher.dispatch(makeEvent('1')), dispatcher.dispatch(makeEvent('2'))];
    const third = await dispatcher.dispatch(makeEvent('3'));
    expect(third.deliveries.map((d) => [d.pluginId, d.state, d.error?.code ?? null])).toEqual([
      ['com.a.restarting', 'failed', 'delivery.unavailable'],
      ['com.b.other', expect.stringMatching(/^(running|completed)$/), null],
    ]);
    expect(dispatcher.refusals).toEqual({ hostBacklog: 0 });
    restarting.available = true;
    restarting.starting = false;
    const records = await Promise.all(held);
    expect(records.map((r) => r.deliveries[0]!.error)).toEqual([null, null]);
  });

  it('lets only plugins the event was handed to reply to it', async () => {
    const { plugin, gate } = busy('reject');
    const { dispatcher } = setup([plugin]);
    const records = [dispatcher.dispatch(makeEvent('1')), dispatcher.dispatch(makeEvent('2'))];
    await until(() => dispatcher.events.list({ limit: 2 }).length === 2, 'both events are logged');
    const refused = dispatcher.events.list({ limit: 1 })[0]!;
    expect(refused.deliveries[0]).toMatchObject({ sent: false, state: 'queued' });
    const reply = (eventId: string) =>
      dispatcher.sink.send({
        pluginId: 'com.a.busy',
        kind: 'reply',
        eventId,
        message: { format: 'text', parts: [{ type: 'text', text: 'hi' }] },
      });
    await expect(reply(refused.eventId)).rejects.toMatchObject({ code: 'message.reference.unknown' });
    gate.resolve();
    const first = await records[0]!;
    expect(first.deliveries[0]).toMatchObject({ sent: true, error: null });
  });

  it('drops the oldest waiting event (dropOldest)', async () => {
    const { plugin, gate } = busy('dropOldest');
    const { dispatcher } = setup([plugin]);
    const records = [dispatcher.dispatch(makeEvent('1')), dispatcher.dispatch(makeEvent('2')), dispatcher.dispatch(makeEvent('3'))];
    const second = await records[1]!;
    expect(second.deliveries[0]!.error!.code).toBe('delivery.dropped');
    gate.resolve();
    const third = await records[2]!;
    expect(third.deliveries[0]!.error).toBeNull();
    expect(plugin.received.map((e) => e.message.content)).toEqual(['1', '3']);
  });
});

describe('Dispatcher decisions and completions', () => {
  const text = { format: 'text' as const, parts: [{ type: 'text' as const, text: 'done' }] };

  it('routes on the decision, records the completion apart and reports the event complete after it', async () => {
    const gate = deferred();
    const worker = new InProcessPlugin(
      'com.a.worker',
      {},
      async () => ({}),
      async (event, sink) => {
        await gate.promise;
        await sink.send({ pluginId: 'com.a.worker', kind: 'reply', eventId: event.eventId, message: text });
        return { error: { code: 'worker.partial', message: 'one source failed' }, durationMs: 42 };
      },
    );
    const { dispatcher, provider } = setup([worker]);
    const record = await dispatcher.dispatch(makeEvent('hi'));
    expect(record.routedAt).not.toBeNull();
    expect(record.completedAt).toBeNull();
    expect(record.deliveries[0]).toMatchObject({ state: 'running', accepted: true, completion: null });
    gate.resolve();
    expect(await dispatcher.whenCompleted(record.eventId)).toBe(record);
    expect(record.completedAt).not.toBeNull();
    expect(record.deliveries[0]).toMatchObject({ state: 'failed', completion: { error: { code: 'worker.partial' }, durationMs: 42 } });
    expect(provider.sent).toHaveLength(1);
  });

  it('keeps the slot of an accepted event until its completion', async () => {
    const gate = deferred();
    const worker = new InProcessPlugin(
      'com.a.worker',
      { concurrency: { maxConcurrentEvents: 1, queueCapacity: 4, overflowPolicy: 'reject', handlerDeadlineMilliseconds: 60_000 } },
      async () => ({}),
      async () => {
        await gate.promise;
        return {};
      },
    );
    const { dispatcher } = setup([worker]);
    const first = await dispatcher.dispatch(makeEvent('1'));
    const second = dispatcher.dispatch(makeEvent('2'));
    await until(() => dispatcher.queueStats()[0]?.waiting === 1, 'the second event waits in the queue');
    expect(worker.received).toHaveLength(1);
    expect(dispatcher.queueStats()).toEqual([expect.objectContaining({ pluginId: 'com.a.worker', active: 1, waiting: 1 })]);
    gate.resolve();
    await dispatcher.whenCompleted(first.eventId);
    expect((await second).deliveries[0]).toMatchObject({ state: 'completed', completion: { error: null } });
    expect(worker.received).toHaveLength(2);
  });

  it('cancels a handler past its deadline, records delivery.deadline and frees the slot', async () => {
    const worker = new InProcessPlugin(
      'com.a.stuck',
      { concurrency: { maxConcurrentEvents: 1, queueCapacity: 4, overflowPolicy: 'reject', handlerDeadlineMilliseconds: 40 } },
      async () => ({}),
      () => new Promise(() => undefined),
    );
    const { dispatcher } = setup([worker]);
    const first = await dispatcher.dispatch(makeEvent('1'));
    const second = dispatcher.dispatch(makeEvent('2'));
    await dispatcher.whenCompleted(first.eventId);
    expect(first.deliveries[0]).toMatchObject({ state: 'failed', accepted: true, completion: { error: { code: 'delivery.deadline' } } });
    expect(worker.cancelled).toEqual([{ eventId: first.eventId, reason: 'deadline' }]);
    await second;
    expect(worker.received).toHaveLength(2);
  });

  it('answers whenCompleted at once for an unknown or complete event', async () => {
    const { dispatcher } = setup([new InProcessPlugin('com.a.quick', {})]);
    const record = await dispatcher.dispatch(makeEvent('hi'));
    expect(await dispatcher.whenCompleted(record.eventId)).toBe(record);
    expect(await dispatcher.whenCompleted('nope')).toBeUndefined();
  });
});

describe('Dispatcher event log', () => {
  it('streams the updates of an event', async () => {
    const plugin = new InProcessPlugin('com.a.echo', {}, async (event, sink) => {
      await sink.send({
        pluginId: 'com.a.echo',
        kind: 'reply',
        eventId: event.eventId,
        message: { format: 'text', parts: [{ type: 'text', text: 'hi' }] },
      });
      return {};
    });
    const { dispatcher } = setup([plugin]);
    const abort = new AbortController();
    const seen: EventLogUpdate['type'][] = [];
    const reading = (async () => {
      for await (const u of dispatcher.events.stream({ signal: abort.signal })) {
        seen.push(u.type);
        if (u.type === 'completed') abort.abort();
      }
    })();
    const record = await dispatcher.dispatch(makeEvent('hello'));
    await reading;
    expect(seen[0]).toBe('event');
    expect(seen.slice(1, 3)).toEqual(['outbound', 'delivery']);
    expect(seen).toContain('routed');
    expect(seen[seen.length - 1]).toBe('completed');
    expect(dispatcher.events.list({ pluginId: 'com.a.echo' })[0]).toBe(record);
  });

  it('keeps only the newest events', async () => {
    const dispatcher = new Dispatcher({ endpoints: () => [], events: new EventLog({ capacity: 2 }) });
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await dispatcher.dispatch(makeEvent(String(i)))).eventId);
    expect(dispatcher.events.get(ids[0]!)).toBeUndefined();
    expect(dispatcher.events.list().map((r) => r.eventId)).toEqual([ids[2], ids[1]]);
  });
});

describe('Dispatcher inbox', () => {
  /** An inbox whose writes the test finishes or fails by hand. */
  class HeldInbox {
    readonly kept: MessageEvent[] = [];
    readonly writes: { event: MessageEvent; done: () => void; fail: (e: Error) => void }[] = [];
    add(event: MessageEvent): Promise<void> {
      return new Promise<void>((resolve, reject) =>
        this.writes.push({
          event,
          done: () => {
            this.kept.push(event);
            resolve();
          },
          fail: reject,
        }),
      );
    }
    async unsettled(): Promise<MessageEvent[]> {
      return this.kept;
    }
  }

  it('routes a taken event only once it is kept, and counts it against the host-wide bound meanwhile', async () => {
    const plugin = new InProcessPlugin('com.a.one', {});
    const inbox = new HeldInbox();
    const dispatcher = new Dispatcher({ endpoints: () => [plugin], inbox, maxWaitingEvents: 1 });
    const first = dispatcher.take(makeEvent('one'));
    expect(first.accepted).toBe(true);
    // Not routed while it is being kept, yet it counts: the next event is refused at the bound of 1.
    await new Promise((r) => setImmediate(r));
    expect(plugin.received).toHaveLength(0);
    expect(dispatcher.take(makeEvent('two')).accepted).toBe(false);
    inbox.writes[0]!.done();
    if (!first.accepted) throw new Error('unreachable');
    await first.durable;
    const record = await first.routed;
    expect(record.deliveries.map((d) => d.pluginId)).toEqual(['com.a.one']);
    expect(plugin.received).toHaveLength(1);
  });

  it('does not route an event it could not keep, and dispatch answers STORE_UNAVAILABLE', async () => {
    const plugin = new InProcessPlugin('com.a.one', {});
    const inbox = new HeldInbox();
    const dispatcher = new Dispatcher({ endpoints: () => [plugin], inbox });
    const dispatched = dispatcher.dispatch(makeEvent('lost'));
    inbox.writes[0]!.fail(new Error('the disk is full'));
    await expect(dispatched).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(plugin.received).toHaveLength(0);
    expect(dispatcher.events.list({ limit: 10 })).toHaveLength(0);
    // The bound counts it no longer.
    expect(dispatcher.waitingEvents()).toBe(0);
  });

  it('keeps nothing for an event no plugin takes', async () => {
    const inbox = new HeldInbox();
    const dispatcher = new Dispatcher({ endpoints: () => [], inbox });
    const record = await dispatcher.dispatch(makeEvent('nobody'));
    expect(record.recipients).toEqual([]);
    expect(inbox.writes).toHaveLength(0);
  });

  it('routes the events a previous run left to the plugins that take them now', async () => {
    const plugin = new InProcessPlugin('com.a.one', {});
    const dispatcher = new Dispatcher({ endpoints: () => [plugin] });
    dispatcher.resume([makeEvent('left over')]);
    await new Promise((r) => setImmediate(r));
    expect(plugin.received.map((e) => e.message.content)).toEqual(['left over']);
  });
});
