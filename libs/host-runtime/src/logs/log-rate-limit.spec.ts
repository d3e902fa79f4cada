import { LogRateLimiter } from './log-rate-limit';

describe('LogRateLimiter', () => {
  it('lets a burst through, then the sustained rate, and summarises what it dropped', () => {
    let now = 0;
    const summaries: string[] = [];
    const limiter = new LogRateLimiter(
      { linesPerSecond: 10, burst: 5 },
      (m) => summaries.push(m),
      () => now,
    );
    const taken = Array.from({ length: 8 }, () => limiter.take());
    expect(taken).toEqual([true, true, true, true, true, false, false, false]);
    now += 200; // two lines' worth of tokens
    expect([limiter.take(), limiter.take(), limiter.take()]).toEqual([true, true, false]);
    limiter.flush();
    expect(summaries).toEqual(['4 log lines dropped: the plugin logs faster than 10 lines per second (bursts of up to 5)']);
    limiter.flush();
    expect(summaries).toHaveLength(1);
  });

  it('refills no further than the burst', () => {
    let now = 0;
    const limiter = new LogRateLimiter(
      { linesPerSecond: 10, burst: 3 },
      () => undefined,
      () => now,
    );
    now += 60_000;
    expect(Array.from({ length: 4 }, () => limiter.take())).toEqual([true, true, true, false]);
  });
});
