import { RUNTIME_DEFAULTS, type Concurrency } from '@host/protocol';

export const DEFAULT_CONCURRENCY: Concurrency = {
  maxConcurrentEvents: RUNTIME_DEFAULTS.maxConcurrentEvents,
  queueCapacity: RUNTIME_DEFAULTS.queueCapacity,
  overflowPolicy: 'reject',
  handlerDeadlineMilliseconds: RUNTIME_DEFAULTS.handlerDeadlineMilliseconds,
};

interface Waiting<T> {
  run: () => Promise<T>;
  resolve: (value: T) => void;
  refuse: (why: 'delivery.dropped') => T;
}

/**
 * The bounded queue in front of one plugin: at most `maxConcurrentEvents`
 * jobs run at once and at most `queueCapacity` wait. When the queue is full,
 * "reject" refuses the new job and "dropOldest" drops the oldest waiting one;
 * either way the refused job settles at once with the refusal's outcome.
 */
export class PluginQueue {
  private active = 0;
  private readonly waiting: Waiting<unknown>[] = [];

  constructor(private limits: Concurrency = DEFAULT_CONCURRENCY) {}

  setLimits(limits: Concurrency): void {
    this.limits = limits;
    this.pump();
  }

  get stats(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.waiting.length };
  }

  /**
   * Runs `run` when a slot is free. `refuse` builds the result of a job that
   * never runs (queue full or dropped); `run` must not reject.
   */
  submit<T>(run: () => Promise<T>, refuse: (why: 'delivery.queue_full' | 'delivery.dropped') => T): Promise<T> {
    if (this.active < this.limits.maxConcurrentEvents && this.waiting.length === 0) return this.start(run);
    if (this.waiting.length >= this.limits.queueCapacity) {
      if (this.limits.overflowPolicy === 'reject' || this.limits.queueCapacity === 0) return Promise.resolve(refuse('delivery.queue_full'));
      const oldest = this.waiting.shift()!;
      oldest.resolve(oldest.refuse('delivery.dropped'));
    }
    return new Promise<T>((resolve) => {
      this.waiting.push({ run, resolve, refuse } as Waiting<unknown>);
    });
  }

  private start<T>(run: () => Promise<T>): Promise<T> {
    this.active++;
    return run().finally(() => {
      this.active--;
      this.pump();
    });
  }

  private pump(): void {
    while (this.active < this.limits.maxConcurrentEvents && this.waiting.length > 0) {
      const next = this.waiting.shift()!;
      void this.start(next.run).then(next.resolve);
    }
  }
}
