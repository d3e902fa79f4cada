import { answeredDelivery, type DeliveryOutcome, type PluginEndpoint, type RuntimeStatus } from '@host/host-core';
import { ConsoleProvider } from '@host/host-console';
import { Dispatcher, type PluginQueueStats } from '@host/host-dispatch';
import { HostMetrics } from './host-metrics';
import { parseExposition, sampleValue as value, type Exposition } from './testing';

async function scrape(metrics: HostMetrics): Promise<Exposition> {
  return parseExposition((await metrics.render()).body);
}

/** A plugin in the test process answering each event as `answer` says: accept, decline or fail. */
function plugin(pluginId: string, answer: (text: string) => Partial<DeliveryOutcome>): PluginEndpoint {
  return {
    pluginId,
    transport: 'http',
    routing: () => ({
      pluginId,
      eventSubscriptions: [{ eventType: 'message.created' }],
      canIntercept: false,
      permissions: [],
      commands: [],
    }),
    isAvailable: () => true,
    deliver: (event) =>
      answeredDelivery(
        Promise.resolve({ pluginId, accepted: true, intercepted: false, error: null, durationMs: 1, ...answer(event.message.content) }),
      ),
  };
}

const status = (state: RuntimeStatus['state'], crashCount: number): RuntimeStatus => ({ state, crashCount });

describe('HostMetrics', () => {
  it('counts events, deliveries by outcome and error code, and their latencies from the event log', async () => {
    const metrics = new HostMetrics({ defaultMetrics: false });
    const provider = new ConsoleProvider();
    const dispatcher = new Dispatcher({
      endpoints: () => [
        plugin('com.example.yes', () => ({})),
        plugin('com.example.picky', (text) =>
          text === 'fail'
            ? { accepted: false, error: { code: 'delivery.failed', message: 'broken' } }
            : text === 'odd'
              ? { accepted: false, error: { code: 'my.own.code', message: 'a code of its own' } }
              : { accepted: false },
        ),
      ],
    });
    dispatcher.providers.register(provider);
    metrics.observeEventLog(dispatcher.events);
    const say = async (text: string) => {
      const record = await dispatcher.dispatch(
        provider.createEvent({ conversation: { type: 'group', id: 'g1' }, sender: { id: 'u1' }, text }),
      );
      await dispatcher.whenCompleted(record.eventId);
    };
    for (const text of ['hi', 'hi', 'fail', 'odd']) await say(text);

    const f = await scrape(metrics);
    expect(value(f, 'host_events_received_total', { provider: 'console' })).toBe(4);
    expect(value(f, 'host_deliveries_total', { plugin_id: 'com.example.yes', outcome: 'completed' })).toBe(4);
    expect(value(f, 'host_deliveries_total', { plugin_id: 'com.example.picky', outcome: 'declined' })).toBe(2);
    expect(value(f, 'host_deliveries_total', { plugin_id: 'com.example.picky', outcome: 'failed' })).toBe(2);
    // A code outside the catalogue never becomes a label value of its own.
    expect(value(f, 'host_delivery_errors_total', { plugin_id: 'com.example.picky', code: 'delivery.failed' })).toBe(1);
    expect(value(f, 'host_delivery_errors_total', { plugin_id: 'com.example.picky', code: 'other' })).toBe(1);
    expect(
      f.samples
        .get('host_delivery_errors_total')!
        .map((m) => m.labels['code'])
        .sort(),
    ).toEqual(['delivery.failed', 'other']);
    expect(f.types.get('host_handler_duration_seconds')).toBe('HISTOGRAM');
    expect(value(f, 'host_handler_duration_seconds_count', { plugin_id: 'com.example.yes' })).toBe(4);
    expect(value(f, 'host_delivery_decision_seconds_count', { plugin_id: 'com.example.picky' })).toBe(4);
    expect(value(f, 'host_event_duration_seconds_count', { provider: 'console' })).toBe(4);
    // No user, group or event id in any label.
    const body = (await metrics.render()).body;
    expect(body).not.toContain('u1');
    expect(body).not.toContain('g1');
  });

  it('reads queues, refusals and circuits at scrape time from their owners', async () => {
    const metrics = new HostMetrics({ defaultMetrics: false });
    const queues: PluginQueueStats[] = [{ pluginId: 'p1', active: 2, waiting: 5, oldestWaitMilliseconds: 1500, expired: 3, dropped: 1 }];
    const refusals = { hostBacklog: 7 };
    let circuit: 'closed' | 'open' | 'half-open' = 'open';
    metrics.attach({
      queues: () => queues,
      refusals: () => refusals,
      circuits: () => [{ pluginId: 'h1', circuit, consecutiveFailures: 5 }],
    });
    let f = await scrape(metrics);
    expect(value(f, 'host_plugin_waiting_events', { plugin_id: 'p1' })).toBe(5);
    expect(value(f, 'host_plugin_active_deliveries', { plugin_id: 'p1' })).toBe(2);
    expect(value(f, 'host_plugin_oldest_waiting_event_age_seconds', { plugin_id: 'p1' })).toBe(1.5);
    expect(value(f, 'host_plugin_expired_events_total', { plugin_id: 'p1' })).toBe(3);
    expect(value(f, 'host_plugin_dropped_events_total', { plugin_id: 'p1' })).toBe(1);
    expect(value(f, 'host_events_refused_total', { reason: 'host_backlog' })).toBe(7);
    expect(value(f, 'host_http_plugin_circuit_state', { plugin_id: 'h1', state: 'open' })).toBe(1);
    expect(value(f, 'host_http_plugin_circuit_state', { plugin_id: 'h1', state: 'closed' })).toBe(0);
    expect(value(f, 'host_http_plugin_consecutive_failures', { plugin_id: 'h1' })).toBe(5);

    // The next scrape shows the state as it is then: nothing is copied or kept.
    queues[0] = { ...queues[0]!, waiting: 0, oldestWaitMilliseconds: null, expired: 4 };
    queues.push({ pluginId: 'p2', active: 0, waiting: 1, oldestWaitMilliseconds: 10, expired: 0, dropped: 0 });
    refusals.hostBacklog = 9;
    circuit = 'closed';
    f = await scrape(metrics);
    expect(value(f, 'host_plugin_waiting_events', { plugin_id: 'p1' })).toBe(0);
    expect(value(f, 'host_plugin_oldest_waiting_event_age_seconds', { plugin_id: 'p1' })).toBe(0);
    expect(value(f, 'host_plugin_waiting_events', { plugin_id: 'p2' })).toBe(1);
    expect(value(f, 'host_plugin_expired_events_total', { plugin_id: 'p1' })).toBe(4);
    expect(value(f, 'host_events_refused_total', { reason: 'host_backlog' })).toBe(9);
    expect(value(f, 'host_http_plugin_circuit_state', { plugin_id: 'h1', state: 'closed' })).toBe(1);
    expect(value(f, 'host_http_plugin_circuit_state', { plugin_id: 'h1', state: 'open' })).toBe(0);
  });

  it('counts crashes and automatic restarts from status changes, not an operator start', async () => {
    const metrics = new HostMetrics({ defaultMetrics: false });
    const steps: RuntimeStatus[] = [
      status('starting', 0),
      status('running', 0),
      status('restartPending', 1),
      status('starting', 1),
      status('running', 1),
      status('restartPending', 2),
      status('starting', 2),
      status('running', 2),
      status('stopping', 2),
      status('stopped', 2),
      // The operator starts it again: the crash count starts over.
      status('starting', 0),
      status('running', 0),
    ];
    for (const s of steps) metrics.pluginStatus('p1', s);
    metrics.pluginStatus('p2', status('starting', 0));
    const f = await scrape(metrics);
    expect(value(f, 'host_plugin_crashes_total', { plugin_id: 'p1' })).toBe(2);
    expect(value(f, 'host_plugin_restarts_total', { plugin_id: 'p1' })).toBe(2);
    expect(value(f, 'host_plugin_crashes_total', { plugin_id: 'p2' })).toBe(0);
    expect(value(f, 'host_plugin_state', { plugin_id: 'p1', state: 'running' })).toBe(1);
    expect(value(f, 'host_plugin_state', { plugin_id: 'p1', state: 'restartPending' })).toBe(0);
  });

  it('counts replies and sends by provider and result, with codes bounded by the catalogue', async () => {
    const metrics = new HostMetrics({ defaultMetrics: false });
    metrics.outbound('console', { kind: 'reply', error: null });
    metrics.outbound('console', { kind: 'reply', error: null });
    metrics.outbound('qqbot', { kind: 'send', error: { code: 'message.permission.denied', message: 'no' } });
    metrics.outbound('qqbot', { kind: 'send', error: { code: 'made.up', message: 'no' } });
    const f = await scrape(metrics);
    expect(value(f, 'host_outbound_messages_total', { provider: 'console', kind: 'reply', result: 'ok' })).toBe(2);
    expect(value(f, 'host_outbound_messages_total', { provider: 'qqbot', kind: 'send', result: 'message.permission.denied' })).toBe(1);
    expect(value(f, 'host_outbound_messages_total', { provider: 'qqbot', kind: 'send', result: 'other' })).toBe(1);
  });

  it('times the asynchronous calls of a store and leaves the rest as it was', async () => {
    const metrics = new HostMetrics({ defaultMetrics: false });
    class Store {
      #rows = new Map<string, number>([['a', 1]]);
      async get(key: string): Promise<number | undefined> {
        return this.#rows.get(key);
      }
      async fail(): Promise<never> {
        throw new Error('database away');
      }
      size(): number {
        return this.#rows.size;
      }
    }
    const store = metrics.timeStore(new Store(), 'registry');
    expect(await store.get('a')).toBe(1);
    expect(await store.get('b')).toBeUndefined();
    await expect(store.fail()).rejects.toThrow('database away');
    expect(store.size()).toBe(1);
    const f = await scrape(metrics);
    expect(value(f, 'host_store_operation_duration_seconds_count', { store: 'registry', operation: 'get', result: 'ok' })).toBe(2);
    expect(value(f, 'host_store_operation_duration_seconds_count', { store: 'registry', operation: 'fail', result: 'error' })).toBe(1);
    expect(value(f, 'host_store_operation_duration_seconds_count', { operation: 'size' })).toBeUndefined();
  });

  it("exports prom-client's process and Node.js metrics with the host_ prefix", async () => {
    const f = await scrape(new HostMetrics());
    expect(f.samples.has('host_process_resident_memory_bytes')).toBe(true);
    expect(f.samples.has('host_nodejs_eventloop_lag_seconds')).toBe(true);
    expect(f.samples.has('host_nodejs_heap_size_used_bytes')).toBe(true);
  });
});
