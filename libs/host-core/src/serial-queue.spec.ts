import { SerialQueue } from './serial-queue';

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('SerialQueue', () => {
  // Each row queues tasks (ms to wait, then ok or fail) and expects the order they ran and finished in.
  it.each<[string, { ms: number; fail?: boolean }[]]>([
    ['a slow task before a fast one', [{ ms: 20 }, { ms: 0 }]],
    ['many tasks', [{ ms: 5 }, { ms: 1 }, { ms: 3 }, { ms: 0 }, { ms: 2 }]],
    ['a failing task in the middle', [{ ms: 5 }, { ms: 1, fail: true }, { ms: 0 }]],
    ['a failing first task', [{ ms: 0, fail: true }, { ms: 1 }]],
  ])('runs %s one at a time, in order', async (_name, tasks) => {
    const q = new SerialQueue();
    const events: string[] = [];
    const results = tasks.map((t, i) =>
      q
        .run(async () => {
          events.push(`start ${i}`);
          await new Promise((r) => setTimeout(r, t.ms));
          events.push(`end ${i}`);
          if (t.fail) throw new Error(`task ${i}`);
          return i;
        })
        .then(
          (v) => `ok ${v}`,
          (e: Error) => `failed ${e.message}`,
        ),
    );
    expect(await Promise.all(results)).toEqual(tasks.map((t, i) => (t.fail ? `failed task ${i}` : `ok ${i}`)));
    expect(events).toEqual(tasks.flatMap((_t, i) => [`start ${i}`, `end ${i}`]));
  });

  it('runs a synchronous task and passes a synchronous throw to its caller', async () => {
    const q = new SerialQueue();
    await expect(q.run(() => 1)).resolves.toBe(1);
    await expect(
      q.run(() => {
        throw new Error('sync');
      }),
    ).rejects.toThrow('sync');
    await expect(q.run(() => 2)).resolves.toBe(2);
  });

  it('idle waits for tasks queued while it waits', async () => {
    const q = new SerialQueue();
    const done: number[] = [];
    void q.run(async () => {
      await tick();
      done.push(1);
      void q.run(async () => {
        await tick();
        done.push(2);
      });
    });
    await q.idle();
    expect(done).toEqual([1, 2]);
  });

  it('idle resolves at once on an empty queue and after failures', async () => {
    const q = new SerialQueue();
    await q.idle();
    q.run(() => Promise.reject(new Error('x'))).catch(() => undefined);
    await expect(q.idle()).resolves.toBeUndefined();
  });
});
