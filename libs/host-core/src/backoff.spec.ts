import { backoffDelay, type BackoffPolicy } from './backoff';

describe('backoffDelay', () => {
  it.each<[string, BackoffPolicy, number[]]>([
    ['doubles from the base up to the cap', { baseMilliseconds: 100, maxMilliseconds: 1000 }, [100, 200, 400, 800, 1000, 1000]],
    ['grows by another factor', { baseMilliseconds: 200, factor: 4, maxMilliseconds: 800 }, [200, 800, 800]],
    ['stays at the base with factor 1', { baseMilliseconds: 50, factor: 1, maxMilliseconds: 1000 }, [50, 50, 50]],
  ])('without jitter %s', (_name, policy, expected) => {
    expect(expected.map((_, attempt) => backoffDelay(policy, attempt))).toEqual(expected);
  });

  it('never grows past the cap, however many attempts failed', () => {
    const policy = { baseMilliseconds: 1000, maxMilliseconds: 60_000 };
    expect(backoffDelay(policy, 10_000)).toBe(60_000);
    expect(backoffDelay(policy, Number.MAX_SAFE_INTEGER)).toBe(60_000);
    expect(backoffDelay(policy, -3)).toBe(1000);
  });

  it('takes off at most the jitter share, drawn at random', () => {
    const policy = { baseMilliseconds: 100, maxMilliseconds: 5000, jitter: 0.5 };
    expect(backoffDelay(policy, 3, () => 0)).toBe(800);
    expect(backoffDelay(policy, 3, () => 0.5)).toBe(600);
    expect(backoffDelay(policy, 3, () => 0.999999)).toBe(400);
    expect(backoffDelay(policy, 20, () => 0.999999)).toBe(2500);
  });

  it('spreads the waits of replicas that failed together', () => {
    const policy = { baseMilliseconds: 100, maxMilliseconds: 5000, jitter: 0.5 };
    const waits = Array.from({ length: 200 }, () => backoffDelay(policy, 6));
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(2500);
    expect(Math.max(...waits)).toBeLessThanOrEqual(5000);
    expect(new Set(waits).size).toBeGreaterThan(20);
  });
});
