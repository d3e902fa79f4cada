import { answeredDelivery, type DeliveryOutcome, type PluginEndpoint } from '@host/host-core';
import { ConsoleProvider } from '@host/host-console';
import { Dispatcher } from '@host/host-dispatch';
import { HostMetrics } from './host-metrics';
import { STATS_BUCKET_COUNT, STATS_RESERVOIR_SIZE, StatsRing } from './stats-ring';
import { tapEventLog } from './event-log-tap';
import { parseExposition, sampleValue } from './testing';

const T0 = Date.parse('2026-01-01T12:00:00.000Z');

function clock(start = T0) {
  const c = { at: start, now: () => c.at };
  return c;
}

describe('StatsRing', () => {
  it('answers an hour of empty 10 s buckets, oldest first, the current one last', () => {
    const c = clock(T0 + 4_000);
    const series = new StatsRing(c.now).series();
    expect(series).toHaveLength(STATS_BUCKET_COUNT);
    expect(series.at(-1)).toEqual({
      at: '2026-01-01T12:00:00.000Z',
      eventsIn: 0,
      completed: 0,
      declined: 0,
      failed: 0,
      expired: 0,
      p50Milliseconds: null,
      p99Milliseconds: null,
    });
    expect(series[0]!.at).toBe('2026-01-01T11:00:10.000Z');
  });

  it('counts events and outcomes in the bucket of their time, and forgets a bucket after an hour', () => {
    const c = clock();
    const ring = new StatsRing(c.now);
    ring.eventReceived();
    ring.deliveryFinal('com.example.a', 'completed', null);
    c.at += 10_000;
    ring.eventReceived();
    ring.eventReceived();
    ring.deliveryFinal('com.example.a', 'failed', { code: 'delivery.failed', message: 'broken' });
    ring.deliveryFinal('com.example.a', 'declined', null);
    let series = ring.series();
    expect(series.at(-2)).toMatchObject({ eventsIn: 1, completed: 1, failed: 0 });
    expect(series.at(-1)).toMatchObject({ eventsIn: 2, failed: 1, declined: 1 });

    // 359 buckets later the first one is the oldest still shown; one more and its slot is reused.
    c.at += 358 * 10_000;
    series = ring.series();
    expect(series[0]).toMatchObject({ at: new Date(T0).toISOString(), eventsIn: 1 });
    c.at += 10_000;
    ring.eventReceived();
    series = ring.series();
    expect(series[0]).toMatchObject({ eventsIn: 2 });
    expect(series.at(-1)).toMatchObject({ eventsIn: 1, completed: 0 });
    expect(series.reduce((n, b) => n + b.eventsIn, 0)).toBe(3);
  });

  it('gives p50 and p99 of the latencies of a bucket', () => {
    const c = clock();
    const ring = new StatsRing(c.now);
    for (let ms = 1; ms <= 100; ms++) ring.eventCompleted(ms);
    expect(ring.series().at(-1)).toMatchObject({ p50Milliseconds: 50, p99Milliseconds: 99 });
  });

  it('keeps a bounded uniform sample when a bucket sees more latencies than its reservoir', () => {
    const c = clock();
    let seed = 7;
    // A fixed-seed generator, so the kept sample is the same in every run.
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const ring = new StatsRing(c.now, random);
    const n = STATS_RESERVOIR_SIZE * 40;
    for (let i = 0; i < n; i++) ring.eventCompleted(i % 2 === 0 ? 10 : 1000);
    const bucket = ring.series().at(-1)!;
    // Half the samples are 10 ms, half 1000 ms: the median is either, the 99th percentile the slow ones.
    expect([10, 1000]).toContain(bucket.p50Milliseconds);
    expect(bucket.p99Milliseconds).toBe(1000);
    // Late samples must be able to enter: with a sample only of the first ones, a late change would be missed (three quarters are now 5000 ms).
    for (let i = 0; i < 3 * n; i++) ring.eventCompleted(5000);
    expect(ring.series().at(-1)!.p50Milliseconds).toBe(5000);
  });

  it("reports a plugin's outcomes over the last five minutes and its last failure", () => {
    const c = clock();
    const ring = new StatsRing(c.now);
    expect(ring.plugin('com.example.a')).toEqual({ deliveries: 0, failed: 0, expired: 0, lastError: null });
    ring.deliveryFinal('com.example.a', 'failed', { code: 'delivery.failed', message: 'broken' });
    c.at += 60_000;
    ring.deliveryFinal('com.example.a', 'completed', null);
    ring.deliveryFinal('com.example.a', 'expired', { code: 'delivery.expired', message: 'waited too long' });
    ring.deliveryFinal('com.example.b', 'completed', null);
    expect(ring.plugin('com.example.a')).toEqual({
      deliveries: 3,
      failed: 1,
      expired: 1,
      lastError: { code: 'delivery.expired', message: 'waited too long', at: new Date(T0 + 60_000).toISOString() },
    });
    // Past five minutes the first failure leaves the window; the last error stays.
    c.at += 250_000;
    expect(ring.plugin('com.example.a')).toMatchObject({ deliveries: 2, failed: 0, expired: 1 });
    c.at += 60_000;
    expect(ring.plugin('com.example.a')).toMatchObject({ deliveries: 0, lastError: { code: 'delivery.expired' } });
  });
});

/** A plugin in the test process: fails on "fail", accepts the rest. */
function plugin(pluginId: string): PluginEndpoint {
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
    deliver: (event) => {
      const failed: Partial<DeliveryOutcome> =
        event.message.content === 'fail' ? { accepted: false, error: { code: 'delivery.failed', message: 'broken' } } : {};
      return answeredDelivery(Promise.resolve({ pluginId, accepted: true, intercepted: false, error: null, durationMs: 1, ...failed }));
    },
  };
}

async function dispatchAll(dispatcher: Dispatcher, provider: ConsoleProvider, texts: string[]): Promise<void> {
  for (const text of texts) {
    const record = await dispatcher.dispatch(
      provider.createEvent({ conversation: { type: 'group', id: 'g1' }, sender: { id: 'u1' }, text }),
    );
    await dispatcher.whenCompleted(record.eventId);
  }
}

describe('the dashboard series fed from the event log', () => {
  it('counts what the metrics count, once each', async () => {
    const metrics = new HostMetrics({ defaultMetrics: false });
    const stats = new StatsRing();
    const provider = new ConsoleProvider();
    const dispatcher = new Dispatcher({ endpoints: () => [plugin('com.example.a')] });
    dispatcher.providers.register(provider);
    metrics.observeEventLog(dispatcher.events, stats);
    await dispatchAll(dispatcher, provider, ['hi', 'fail', 'hi']);

    const f = parseExposition((await metrics.render()).body);
    const series = stats.series();
    const sum = (k: 'eventsIn' | 'completed' | 'failed') => series.reduce((n, b) => n + b[k], 0);
    expect(sum('eventsIn')).toBe(sampleValue(f, 'host_events_received_total', { provider: 'console' }));
    expect(sum('completed')).toBe(sampleValue(f, 'host_deliveries_total', { plugin_id: 'com.example.a', outcome: 'completed' }));
    expect(sum('failed')).toBe(sampleValue(f, 'host_deliveries_total', { plugin_id: 'com.example.a', outcome: 'failed' }));
    expect(sum('eventsIn')).toBe(3);
    expect(series.filter((b) => b.p50Milliseconds !== null).length).toBeGreaterThan(0);
    expect(stats.plugin('com.example.a')).toMatchObject({
      deliveries: 3,
      failed: 1,
      lastError: { code: 'delivery.failed', message: 'broken' },
    });
  });

  it('runs without the metrics', async () => {
    const stats = new StatsRing();
    const provider = new ConsoleProvider();
    const dispatcher = new Dispatcher({ endpoints: () => [plugin('com.example.a')] });
    dispatcher.providers.register(provider);
    const stop = tapEventLog(dispatcher.events, undefined, stats);
    await dispatchAll(dispatcher, provider, ['hi']);
    stop();
    await dispatchAll(dispatcher, provider, ['hi']);
    expect(stats.series().reduce((n, b) => n + b.eventsIn, 0)).toBe(1);
    expect(stats.plugin('com.example.a').deliveries).toBe(1);
  });
});
