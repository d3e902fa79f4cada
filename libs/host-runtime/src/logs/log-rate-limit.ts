import type { LineGate } from './line-limits';

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

/** Lines dropped within one summary period, in multiples of the rate, from which a plugin counts as flooding. */
const FAR_OVER_RATES = 4;

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
  private droppedInAll = 0;
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
    this.refill();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    this.drop(1);
    return false;
  }

  /** The LineGate of a plugin's stderr: lines past the rate are counted without being read. */
  readonly gate: LineGate = { admit: () => this.take(), dropped: (lines) => this.drop(lines) };

  /** Counts `lines` dropped without asking for them one by one (stderr past the rate is never split into lines). */
  drop(lines: number): void {
    this.dropped += lines;
    this.droppedInAll += lines;
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), SUMMARY_EVERY_MILLISECONDS);
      this.timer.unref();
    }
  }

  /** Whether the next line would be dropped. */
  get exhausted(): boolean {
    this.refill();
    return this.tokens < 1;
  }

  /**
   * Whether the lines dropped since the last summary are many times the rate: a flood rather than a burst,
   * whose reader may as well stop for a while.
   */
  get farOver(): boolean {
    return this.dropped >= FAR_OVER_RATES * this.rate.linesPerSecond;
  }

  /** Lines dropped since this limiter began. */
  get totalDropped(): number {
    return this.droppedInAll;
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(this.rate.burst, this.tokens + ((now - this.last) / 1000) * this.rate.linesPerSecond);
    this.last = now;
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
