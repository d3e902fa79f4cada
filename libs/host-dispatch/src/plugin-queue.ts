import { DEFAULT_CONCURRENCY, type Concurrency } from '@host/protocol';

/**
 * Why a job that was submitted never ran: dropped for a newer one
 * (dropOldest), expired while waiting, or refused at once because the plugin
 * is not running and `queueCapacity` jobs already wait for it to start.
 */
export type QueueRefusal = 'delivery.dropped' | 'delivery.expired' | 'delivery.unavailable';

/** One plugin's queue as the health views and the admission check read it. */
export interface QueueStats {
  /** Jobs running now (events handed to the plugin and not finished). */
  active: number;
  /** Jobs waiting for a slot. */
  waiting: number;
  /** How long the oldest waiting job has waited, in milliseconds; null when none waits. */
  oldestWaitMilliseconds: number | null;
  /** Jobs that waited past their expiry since the host started (`delivery.expired`). */
  expired: number;
  /** Jobs dropped for newer ones since the host started (`delivery.dropped`, overflow policy dropOldest). */
  dropped: number;
}

export interface PluginQueueOptions {
  /**
   * Whether a waiting job may start now. False while the plugin is on its way
   * to taking events (starting, restarting): jobs wait for it instead of
   * failing. Default: always.
   */
  ready?: () => boolean;
  now?: () => number;
  /** How often waiting jobs are checked for expiry and readiness (default 250 ms). */
  sweepMilliseconds?: number;
}

interface Waiting {
  run: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  refuse: (why: QueueRefusal) => unknown;
  since: number;
  expiresAt: number;
}

/**
 * The queue in front of one plugin: at most `maxConcurrentEvents` jobs run at
 * once, the others wait in arrival order. A waiting job is bounded by time,
 * not by a count: it waits until a slot is free and the plugin is ready, or
 * until its expiry (the event's reply window or the plugin's maximum wait),
 * when it settles with `delivery.expired`. The host's admission check keeps
 * the number of waiting jobs in bounds host-wide before an event is accepted
 * ({@link Dispatcher.admit}), so a job of a running plugin is never refused
 * for room. `queueCapacity` bounds what waits for a plugin that is not
 * running (beyond it a job fails at once, `delivery.unavailable`), and for a
 * plugin that chose overflow policy "dropOldest" the oldest waiting job is
 * dropped for a new one beyond it.
 */
export class PluginQueue {
  private active = 0;
  /** Waiting jobs from `head` on, oldest first (a deque without shifting the array on every start). */
  private waitingJobs: Waiting[] = [];
  private head = 0;
  private expiredCount = 0;
  private droppedCount = 0;
  private sweeper: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  private readonly sweepMs: number;

  constructor(
    private limits: Concurrency = DEFAULT_CONCURRENCY,
    private readonly o: PluginQueueOptions = {},
  ) {
    this.now = o.now ?? Date.now;
    this.sweepMs = o.sweepMilliseconds ?? 250;
  }

  setLimits(limits: Concurrency): void {
    this.limits = limits;
    this.pump();
  }

  get waiting(): number {
    return this.waitingJobs.length - this.head;
  }

  get stats(): QueueStats {
    const oldest = this.waitingJobs[this.head];
    return {
      active: this.active,
      waiting: this.waiting,
      oldestWaitMilliseconds: oldest ? Math.max(0, this.now() - oldest.since) : null,
      expired: this.expiredCount,
      dropped: this.droppedCount,
    };
  }

  /**
   * Runs `run` when a slot is free and the plugin is ready, unless the job
   * expires first (`expiresAt`, epoch milliseconds) or is dropped for a newer
   * one; `refuse` builds the result of a job that never runs. `run` must not
   * reject.
   */
  submit<T>(run: () => Promise<T>, refuse: (why: QueueRefusal) => T, expiresAt = Number.POSITIVE_INFINITY): Promise<T> {
    const ready = this.isReady();
    if (this.waiting === 0 && this.active < this.limits.maxConcurrentEvents && ready) return this.start(run);
    // A plugin that is not running (starting, restarting after crashes) holds at most queueCapacity jobs for
    // later: beyond that a job fails at once, for this plugin only, rather than the host refusing every event.
    if (!ready && this.limits.overflowPolicy === 'reject' && this.waiting >= this.limits.queueCapacity) {
      return Promise.resolve(refuse('delivery.unavailable'));
    }
    if (this.limits.overflowPolicy === 'dropOldest' && this.waiting >= this.limits.queueCapacity) {
      if (this.limits.queueCapacity === 0) {
        this.droppedCount++;
        return Promise.resolve(refuse('delivery.dropped'));
      }
      const oldest = this.takeOldest()!;
      this.droppedCount++;
      oldest.resolve(oldest.refuse('delivery.dropped'));
    }
    return new Promise<T>((resolve) => {
      this.waitingJobs.push({
        run,
        resolve: resolve as (value: unknown) => void,
        refuse,
        since: this.now(),
        expiresAt,
      });
      this.armSweeper();
    });
  }

  private isReady(): boolean {
    return this.o.ready ? this.o.ready() : true;
  }

  private takeOldest(): Waiting | undefined {
    if (this.head >= this.waitingJobs.length) return undefined;
    const job = this.waitingJobs[this.head]!;
    this.waitingJobs[this.head] = undefined as unknown as Waiting;
    this.head++;
    if (this.head === this.waitingJobs.length) {
      this.waitingJobs = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.waitingJobs.length) {
      this.waitingJobs = this.waitingJobs.slice(this.head);
      this.head = 0;
    }
    return job;
  }

  private start<T>(run: () => Promise<T>): Promise<T> {
    this.active++;
    return run().finally(() => {
      this.active--;
      this.pump();
    });
  }

  private pump(): void {
    if (this.waiting === 0) return;
    const now = this.now();
    while (this.active < this.limits.maxConcurrentEvents && this.waiting > 0 && this.isReady()) {
      const next = this.takeOldest()!;
      if (next.expiresAt <= now) {
        this.expiredCount++;
        next.resolve(next.refuse('delivery.expired'));
        continue;
      }
      void this.start(next.run).then(next.resolve);
    }
    if (this.waiting === 0) this.disarmSweeper();
  }

  /** Expires waiting jobs past their time and starts those a ready plugin has room for. */
  private sweep(): void {
    const now = this.now();
    let expired = false;
    for (let i = this.head; i < this.waitingJobs.length; i++) {
      if (this.waitingJobs[i]!.expiresAt <= now) {
        expired = true;
        break;
      }
    }
    if (expired) {
      const keep: Waiting[] = [];
      for (let i = this.head; i < this.waitingJobs.length; i++) {
        const job = this.waitingJobs[i]!;
        if (job.expiresAt > now) keep.push(job);
        else {
          this.expiredCount++;
          job.resolve(job.refuse('delivery.expired'));
        }
      }
      this.waitingJobs = keep;
      this.head = 0;
    }
    this.pump();
    if (this.waiting === 0) this.disarmSweeper();
  }

  private armSweeper(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => this.sweep(), this.sweepMs);
    // Waiting jobs must not keep a process alive on their own (a test run, a host shutting down).
    this.sweeper.unref();
  }

  private disarmSweeper(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }
}
