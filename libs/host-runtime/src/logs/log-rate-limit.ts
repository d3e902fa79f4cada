/** How many log lines one plugin process may write: a sustained rate and a burst. */
export interface LogRate {
  linesPerSecond: number;
  burst: number;
}

/**
 * The default: far above what a plugin logs in normal work (a busy debug log
 * writes a few dozen lines per event), far below what costs the host real
 * CPU and disk.
 */
export const DEFAULT_LOG_RATE: LogRate = { linesPerSecond: 500, burst: 2_000 };

/** How often a plugin that keeps over its rate gets the summary line. */
const SUMMARY_EVERY_MILLISECONDS = 1_000;

/**
 * A token bucket over a plugin's log lines (log.write and stderr). A line
 * over the rate is dropped; one summary line per second says how many were.
 */
export class LogRateLimiter {
  private tokens: number;
  private last: number;
  private dropped = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly rate: LogRate,
    private readonly summarise: (message: string) => void,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = rate.burst;
    this.last = now();
  }

  /** True when the line may be logged; false when it is dropped (and counted). */
  take(): boolean {
    const now = this.now();
    this.tokens = Math.min(this.rate.burst, this.tokens + ((now - this.last) / 1000) * this.rate.linesPerSecond);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    this.dropped++;
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), SUMMARY_EVERY_MILLISECONDS);
      this.timer.unref();
    }
    return false;
  }

  /** Writes the summary of the lines dropped so far, if any (also when the process ends). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.dropped === 0) return;
    const n = this.dropped;
    this.dropped = 0;
    this.summarise(
      `${n} log line${n === 1 ? '' : 's'} dropped: the plugin logs faster than ${this.rate.linesPerSecond} lines per second (bursts of up to ${this.rate.burst})`,
    );
  }
}
