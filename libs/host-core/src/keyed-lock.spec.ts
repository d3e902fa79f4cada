import { KeyedLock } from './keyed-lock';

const tick = () => new Promise((r) => setImmediate(r));

describe('KeyedLock', () => {
  it('runs work on one key one at a time, in arrival order', async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    const step = (name: string) => async () => {
      log.push(`${name}:in`);
      await tick();
      await tick();
      log.push(`${name}:out`);
      return name;
    };
    const results = await Promise.all([lock.run('a', step('1')), lock.run('a', step('2')), lock.run('a', step('3'))]);
    expect(results).toEqual(['1', '2', '3']);
    expect(log).toEqual(['1:in', '1:out', '2:in', '2:out', '3:in', '3:out']);
  });

  it('lets different keys run at the same time', async () => {
    const lock = new KeyedLock();
    let releaseA!: () => void;
    const a = lock.run('a', () => new Promise<void>((r) => (releaseA = r)));
    await expect(lock.run('b', async () => 'b done')).resolves.toBe('b done');
    releaseA();
    await a;
  });

  it('releases the key when work fails, and passes the failure on', async () => {
    const lock = new KeyedLock();
    await expect(lock.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(lock.run('a', async () => 'next')).resolves.toBe('next');
  });

  it('lets work that holds a key take it again instead of waiting for itself', async () => {
    const lock = new KeyedLock();
    const inner = await lock.run('a', () => lock.run('a', async () => 'inner'));
    expect(inner).toBe('inner');
  });

  it('makes a task started inside the work and still running after it wait like anyone else', async () => {
    const lock = new KeyedLock();
    const log: string[] = [];
    let leftover: Promise<void> | undefined;
    let releaseStarted!: () => void;
    const started = new Promise<void>((r) => (releaseStarted = r));
    await lock.run('a', async () => {
      leftover = (async () => {
        await started;
        await lock.run('a', async () => {
          log.push('leftover');
        });
      })();
    });
    let releaseSecond!: () => void;
    const second = lock.run('a', async () => {
      log.push('second:in');
      await new Promise<void>((r) => (releaseSecond = r));
      log.push('second:out');
    });
    await tick();
    releaseStarted();
    await tick();
    await tick();
    releaseSecond();
    await second;
    await leftover;
    expect(log).toEqual(['second:in', 'second:out', 'leftover']);
  });

  it('lets re-entry through again after every hold ended (the context tracking went off in between)', async () => {
    const lock = new KeyedLock();
    for (let round = 0; round < 2; round++) {
      const inner = await lock.run('a', () => lock.run('a', async () => `inner ${round}`));
      expect(inner).toBe(`inner ${round}`);
    }
    // A hold of another key keeps it on for the one still working.
    let releaseB!: () => void;
    const b = lock.run('b', () => new Promise<void>((r) => (releaseB = r)).then(() => lock.run('b', async () => 'b again')));
    await lock.run('a', async () => undefined);
    releaseB();
    expect(await b).toBe('b again');
  });
});
