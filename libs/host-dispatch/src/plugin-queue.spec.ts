import { PluginQueue } from './plugin-queue';

const limits = (maxConcurrentEvents: number, queueCapacity = 1000) => ({
  maxConcurrentEvents,
  queueCapacity,
  overflowPolicy: 'reject' as const,
  handlerDeadlineMilliseconds: 60_000,
});

describe('PluginQueue', () => {
  it('runs waiting jobs in arrival order through many more than its compaction step, and never refuses one for room', async () => {
    let now = 0;
    const q = new PluginQueue(limits(3, 10), { now: () => now });
    const order: number[] = [];
    const jobs = Array.from({ length: 5000 }, (_, i) =>
      q.submit(
        async () => {
          order.push(i);
          await Promise.resolve();
          return 'ran';
        },
        (why) => why,
      ),
    );
    expect(q.stats).toMatchObject({ active: 3, waiting: 4997, oldestWaitMilliseconds: 0 });
    now = 1500;
    expect(q.stats.oldestWaitMilliseconds).toBe(1500);
    expect(new Set(await Promise.all(jobs))).toEqual(new Set(['ran']));
    expect(order).toEqual(Array.from({ length: 5000 }, (_, i) => i));
    expect(q.stats).toEqual({ active: 0, waiting: 0, oldestWaitMilliseconds: null, expired: 0, dropped: 0 });
  });

  it('expires a waiting job at its time while the one before it still runs', async () => {
    let release!: () => void;
    const q = new PluginQueue(limits(1), { sweepMilliseconds: 10 });
    const first = q.submit(
      () => new Promise<string>((r) => (release = () => r('first'))),
      (why) => why,
    );
    const second = q.submit(
      async () => 'second',
      (why) => why,
      Date.now() + 30,
    );
    expect(await second).toBe('delivery.expired');
    expect(q.stats).toMatchObject({ waiting: 0, expired: 1 });
    release();
    expect(await first).toBe('first');
  });

  it('holds jobs while the plugin is not ready, and starts them once it is', async () => {
    let ready = false;
    const q = new PluginQueue(limits(2), { ready: () => ready, sweepMilliseconds: 10 });
    const job = q.submit(
      async () => 'ran',
      (why) => why,
    );
    await new Promise((r) => setTimeout(r, 40));
    expect(q.stats).toMatchObject({ active: 0, waiting: 1 });
    ready = true;
    expect(await job).toBe('ran');
  });

  it('drops the oldest waiting job for a new one beyond its capacity when the plugin chose dropOldest', async () => {
    let release!: () => void;
    const q = new PluginQueue({ ...limits(1, 1), overflowPolicy: 'dropOldest' });
    const running = q.submit(
      () => new Promise<string>((r) => (release = () => r('running'))),
      (why) => why,
    );
    const older = q.submit(
      async () => 'older',
      (why) => why,
    );
    const newer = q.submit(
      async () => 'newer',
      (why) => why,
    );
    expect(await older).toBe('delivery.dropped');
    release();
    expect([await running, await newer]).toEqual(['running', 'newer']);
    expect(q.stats.dropped).toBe(1);
  });
});
