import { EventScheduler, type EventTask } from './scheduler';

function recorder() {
  const order: string[] = [];
  const task = (name: string, wait?: Promise<void>): EventTask => ({
    async run() {
      order.push(`start ${name}`);
      await wait;
      order.push(`end ${name}`);
    },
    refuse: (why) => void order.push(`refused ${name} (${why})`),
  });
  return { order, task };
}

function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

describe('EventScheduler', () => {
  it('before start holds up to maxConcurrent + queueCapacity events, then starts them in order', async () => {
    const s = new EventScheduler(1, 1);
    const { order, task } = recorder();
    expect(s.submit(task('a'))).toBe('queued');
    expect(s.submit(task('b'))).toBe('queued');
    expect(s.submit(task('c'))).toBe('refused');
    expect([s.inFlight, s.queued]).toEqual([0, 2]);
    s.resume();
    expect([s.inFlight, s.queued]).toEqual([1, 1]);
    await new Promise((r) => setImmediate(r));
    await s.idle();
    expect(order).toEqual(['start a', 'end a', 'start b', 'end b']);
  });

  it('once started, runs at most maxConcurrent handlers and queues nothing beyond them', async () => {
    const s = new EventScheduler(2, 64);
    const { order, task } = recorder();
    const g = gate();
    s.resume();
    expect(s.submit(task('a', g.wait))).toBe('started');
    expect(s.submit(task('b', g.wait))).toBe('started');
    expect(s.submit(task('c'))).toBe('refused');
    expect([s.inFlight, s.queued]).toEqual([2, 0]);
    g.open();
    await s.idle();
    expect(s.submit(task('d'))).toBe('started');
    await s.idle();
    expect(order).toEqual(['start a', 'start b', 'end a', 'end b', 'start d', 'end d']);
  });

  it('refuses a waiting task on cancel, and not a running one', async () => {
    const s = new EventScheduler(1, 4);
    const { order, task } = recorder();
    const g = gate();
    const a = task('a', g.wait);
    const b = task('b');
    s.submit(a);
    s.submit(b);
    s.resume();
    expect(s.cancelQueued(a)).toBe(false);
    expect(s.cancelQueued(b)).toBe(true);
    expect(s.cancelQueued(b)).toBe(false);
    g.open();
    await s.idle();
    expect(order).toEqual(['start a', 'refused b (cancelled)', 'end a']);
  });

  it('refuses waiting tasks on stop', () => {
    const s = new EventScheduler(1, 4);
    const { order, task } = recorder();
    s.submit(task('x'));
    s.dropQueued();
    expect([order, s.queued]).toEqual([['refused x (stopping)'], 0]);
  });
});
