import request from 'supertest';
import type { DeliveryRecord, EventRecord } from '@host/host-dispatch';
import { createTestHost, until, type PluginSpec, type TestHost } from './harness';

// Routing on decisions with real plugin processes (docs/protocol/v2.md 6.4 to
// 6.6): the ACK is the decision, events.completed the end of the work, the
// host waits only for declared interceptors, and a delivery holds its
// plugin's slot until completion, the handler deadline or the plugin's exit.

/** Shortest handler deadline a manifest may set, so deadline tests take about a second. */
const DEADLINE_MS = 1000;
const withDeadline = (maxConcurrentEvents = 1): PluginSpec['manifest'] => ({
  concurrency: { maxConcurrentEvents, queueCapacity: 8, overflowPolicy: 'reject', handlerDeadlineMilliseconds: DEADLINE_MS },
});
/** An observer: subscribed to every message, no commands. */
const OBSERVER: PluginSpec['manifest'] = { commands: [] };

/** Posts a console message; the request starts at once (supertest starts on `then`). */
function say(host: TestHost, text: string): Promise<request.Response> {
  return request(host.app)
    .post('/api/console/messages')
    .send({ conversation: { type: 'group', id: 'g1' }, sender: { id: 'u1' }, text })
    .then((r) => r);
}

function recordOf(host: TestHost, eventId: string): EventRecord {
  const record = host.dispatcher.events.get(eventId);
  if (!record) throw new Error(`event ${eventId} is not in the event log`);
  return record;
}

function deliveryOf(record: EventRecord, pluginId: string): DeliveryRecord {
  const delivery = record.deliveries.find((d) => d.pluginId === pluginId);
  if (!delivery) throw new Error(`${pluginId} has no delivery of ${record.eventId}: ${JSON.stringify(record.deliveries)}`);
  return delivery;
}

/** When the plugin's decision was recorded (startedAt is when it entered the queue). */
const decidedAt = (d: DeliveryRecord) => Date.parse(d.startedAt) + d.durationMs!;

async function logMessages(host: TestHost, pluginId: string): Promise<string[]> {
  await host.logs.flush();
  return (await host.logs.tail(pluginId, 500)).map((l) => l.message);
}

/** Installs the fixture so that it logs "event <eventId>" to stderr for every events.message it receives. */
function install(host: TestHost, spec: PluginSpec = {}): string {
  return host.install({ ...spec, args: [...(spec.args ?? []), '--log-events'] });
}

/** How many times the plugin received the event, across all its processes. */
async function receivedCount(host: TestHost, pluginId: string, eventId: string): Promise<number> {
  return (await logMessages(host, pluginId)).filter((m) => m === `event ${eventId}`).length;
}

describe('routing on decisions with real plugin processes', () => {
  let host: TestHost;

  afterEach(async () => {
    await host.close();
  });

  it('does not let a slow handler delay an observer', async () => {
    host = createTestHost();
    const slow = install(host, { pluginId: 'com.example.slow' });
    const watcher = install(host, { pluginId: 'com.example.watcher', manifest: OBSERVER });
    await Promise.all([host.runtime.start(slow), host.runtime.start(watcher)]);

    const res = await say(host, '/slow 1200');
    expect(res.body.completed).toBe(true);
    const record = recordOf(host, res.body.eventId);
    const s = deliveryOf(record, slow);
    const w = deliveryOf(record, watcher);
    expect(s).toMatchObject({ state: 'completed', accepted: true, completion: { error: null } });
    expect(w).toMatchObject({ state: 'completed', accepted: true, completion: { error: null } });
    expect(s.completion!.durationMs).toBeGreaterThanOrEqual(1200);
    // The observer got the event with the slow plugin, not after it: both decided at once, and the
    // observer's work was over long before the slow handler's.
    expect(Math.abs(Date.parse(w.startedAt) - Date.parse(s.startedAt))).toBeLessThan(200);
    expect(decidedAt(w)).toBeLessThan(Date.parse(s.completion!.at) - 1000);
    expect(Date.parse(w.completion!.at)).toBeLessThan(Date.parse(s.completion!.at) - 1000);
    expect(decidedAt(s)).toBeLessThan(Date.parse(s.completion!.at) - 1000);
    expect(Date.parse(record.routedAt!)).toBeLessThan(Date.parse(s.completion!.at) - 1000);
    expect(res.body.outbound.map((o: { body: { content?: string } }) => o.body.content)).toEqual(['slow 1200 ms done']);
  });

  it('cancels a handler past its deadline and frees the slot for the next event', async () => {
    host = createTestHost();
    const id = install(host, { manifest: withDeadline(1) });
    await host.runtime.start(id);

    const first = say(host, '/slow 60000');
    await until(() => host.dispatcher.queueStats().some((q) => q.pluginId === id && q.active === 1), 'the first event in flight');
    // maxConcurrentEvents 1: the second event waits in the queue until the first one's slot is free.
    const second = say(host, '/echo next');
    const [a, b] = [(await first).body, (await second).body];

    expect(a.deliveries).toEqual([
      {
        pluginId: id,
        state: 'failed',
        accepted: true,
        intercepted: false,
        error: null,
        completion: {
          at: expect.any(String),
          error: { code: 'delivery.deadline', message: expect.stringContaining(`within ${DEADLINE_MS} ms`) },
          durationMs: expect.any(Number),
        },
      },
    ]);
    expect(b.deliveries).toEqual([
      expect.objectContaining({ state: 'completed', accepted: true, completion: expect.objectContaining({ error: null }) }),
    ]);
    expect(b.outbound).toHaveLength(1);
    const deadlineAt = Date.parse(recordOf(host, a.eventId).deliveries[0]!.completion!.at);
    expect(Date.parse(recordOf(host, b.eventId).outbound[0]!.at)).toBeGreaterThanOrEqual(deadlineAt);
    // The plugin got events.cancel for the deadline. `cancelled` says whether that call or the plugin's own
    // deadline sweep (the same 1 s) stopped the handler first: a race both sides may win.
    await until(
      async () => (await logMessages(host, id)).some((m) => m.startsWith(`events.cancel ${a.eventId} reason=deadline cancelled=`)),
      'the events.cancel log line',
    );
    // Its events.completed came after the deadline and changed nothing.
    expect(recordOf(host, a.eventId).deliveries[0]!.completion!.error!.code).toBe('delivery.deadline');
  });

  it('stops waiting for a plugin that never reports completion', async () => {
    host = createTestHost();
    const id = install(host, { args: ['never-complete'], manifest: withDeadline(1) });
    await host.runtime.start(id);

    const res = await say(host, '/echo once');
    expect(res.body).toMatchObject({
      completed: true,
      deliveries: [{ state: 'failed', accepted: true, completion: { error: { code: 'delivery.deadline' } } }],
    });
    expect(res.body.outbound).toHaveLength(1);
    // The handler had ended, so the plugin knew no running event to cancel.
    await until(
      async () => (await logMessages(host, id)).includes(`events.cancel ${res.body.eventId} reason=deadline cancelled=false`),
      'the events.cancel log line',
    );
    // The slot is free again: the next event is delivered.
    const next = await say(host, '/echo again');
    expect(next.body.deliveries[0]).toMatchObject({ accepted: true, completion: { error: { code: 'delivery.deadline' } } });
    expect(next.body.outbound).toHaveLength(1);
  });

  it('records Overloaded when a cancelled handler ignores its cancellation and keeps its slot in the plugin', async () => {
    host = createTestHost();
    const id = install(host, { args: ['ignore-cancel'], manifest: withDeadline(1) });
    await host.runtime.start(id);

    const first = say(host, '/slow 1500');
    await until(() => host.dispatcher.queueStats().some((q) => q.pluginId === id && q.active === 1), 'the first event in flight');
    const second = await say(host, '/echo too soon');
    // The host freed its slot at the deadline; the plugin still runs the first handler.
    expect(second.body.deliveries).toEqual([
      expect.objectContaining({
        state: 'failed',
        accepted: false,
        error: { code: 'delivery.plugin_error', message: expect.stringContaining('-32006') },
        completion: null,
      }),
    ]);
    expect((await first).body.deliveries[0].completion.error.code).toBe('delivery.deadline');
  });

  it('ignores an interception the plugin did not declare, records why, and delivers to the plugins after it', async () => {
    host = createTestHost();
    const rogue = install(host, { pluginId: 'com.example.rogue', args: ['undeclared-intercept'] });
    const watcher = install(host, { pluginId: 'com.example.watcher', manifest: OBSERVER });
    await Promise.all([host.runtime.start(rogue), host.runtime.start(watcher)]);

    const res = await say(host, '/echo mine');
    const record = recordOf(host, res.body.eventId);
    expect(record.recipients).toEqual([rogue, watcher]);
    expect(record.interceptedBy).toBeNull();
    expect(deliveryOf(record, rogue)).toMatchObject({
      state: 'completed',
      accepted: true,
      intercepted: false,
      notice: { code: 'delivery.intercept.undeclared' },
    });
    expect(deliveryOf(record, watcher)).toMatchObject({ state: 'completed', accepted: true, intercepted: false });
    expect(deliveryOf(record, watcher).notice).toBeUndefined();
    expect(await receivedCount(host, watcher, record.eventId)).toBe(1);
    expect(await logMessages(host, rogue)).toContainEqual(
      expect.stringContaining('intercepted: true ignored; the manifest does not declare messages.intercept'),
    );
  });

  it('waits for a declared interceptor: observers get a passed event after its decision, and never an intercepted one', async () => {
    host = createTestHost();
    const guard = install(host, { pluginId: 'com.example.guard', manifest: { permissions: ['messages.reply', 'messages.intercept'] } });
    const observers = ['com.example.watcher-a', 'com.example.watcher-b'].map((pluginId) => install(host, { pluginId, manifest: OBSERVER }));
    await Promise.all([guard, ...observers].map((id) => host.runtime.start(id)));

    const stopped = await say(host, '/intercept');
    const s = recordOf(host, stopped.body.eventId);
    expect(s.recipients).toEqual([guard, ...observers]);
    expect(s.interceptedBy).toBe(guard);
    expect(stopped.body.deliveries).toEqual([
      expect.objectContaining({ pluginId: guard, state: 'completed', accepted: true, intercepted: true }),
    ]);

    const passed = await say(host, '/intercept pass after=300');
    const p = recordOf(host, passed.body.eventId);
    expect(p.interceptedBy).toBeNull();
    expect(p.deliveries.map((d) => [d.pluginId, d.state, d.intercepted])).toEqual([
      [guard, 'completed', false],
      [observers[0], 'completed', false],
      [observers[1], 'completed', false],
    ]);
    // The observers were handed the event only once the interceptor had decided (300 ms in).
    const guardDecided = decidedAt(deliveryOf(p, guard));
    expect(guardDecided - Date.parse(deliveryOf(p, guard).startedAt)).toBeGreaterThanOrEqual(290);
    for (const o of observers) expect(Date.parse(deliveryOf(p, o).startedAt)).toBeGreaterThanOrEqual(Math.floor(guardDecided) - 1);

    for (const o of observers) {
      expect(await receivedCount(host, o, stopped.body.eventId)).toBe(0);
      expect(await receivedCount(host, o, passed.body.eventId)).toBe(1);
    }
  });

  it('records a crash after the ACK as interrupted, restarts the plugin, and sends nothing twice', async () => {
    host = createTestHost();
    const id = install(host);
    const { pid } = await host.runtime.start(id);

    const crashed = await say(host, '/crash bye');
    expect(crashed.body).toMatchObject({
      completed: true,
      deliveries: [
        {
          pluginId: id,
          state: 'failed',
          accepted: true,
          error: null,
          completion: { error: { code: 'delivery.interrupted', message: expect.stringContaining('exit code 3') } },
        },
      ],
    });
    // The reply sent before the crash stands.
    expect(crashed.body.outbound.map((o: { body: { markdown?: { content: string }; content?: string } }) => o.body.content)).toEqual([
      'bye',
    ]);

    const back = await host.waitFor(id, (s) => s.state === 'running' && s.pid !== pid);
    expect(back.crashCount).toBe(1);
    const after = await say(host, '/echo after the restart');
    expect(after.body.deliveries).toEqual([
      expect.objectContaining({ state: 'completed', completion: expect.objectContaining({ error: null }) }),
    ]);

    // The restarted process got the new event only; every reply was sent once.
    expect(await receivedCount(host, id, crashed.body.eventId)).toBe(1);
    expect(await receivedCount(host, id, after.body.eventId)).toBe(1);
    const sent = host.dispatcher.events
      .list({ limit: 100 })
      .flatMap((r) => r.outbound.map((o) => `${r.eventId}:${JSON.stringify(o.body)}`));
    expect(sent).toHaveLength(2);
    expect(new Set(sent).size).toBe(2);
    expect(recordOf(host, crashed.body.eventId).outbound).toHaveLength(1);
  });
});
