/** One admitted event, as the scheduler sees it. */
export interface EventTask {
  /** Runs the handler; resolves once its completion was sent (or nothing follows a decline). */
  run(): Promise<void>;
  /** Answers an event that never started: dropped at stop, or cancelled while it waited. */
  refuse(why: 'stopping' | 'cancelled'): void;
}

/**
 * Counts running handlers (docs/protocol/v2.md 6.5): a handler holds its
 * slot from admission until its completion was sent, so `maxConcurrent` is
 * what the host counts too. Once started the scheduler queues nothing: an
 * event that finds every slot busy is refused (the runtime answers
 * Overloaded). Only before onStart finished do events wait, at most
 * `maxConcurrent + queueCapacity` of them, the most the host can have sent.
 */
export class EventScheduler {
  private running = 0;
  private readonly queue: EventTask[] = [];
  private paused = true;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private maxConcurrent: number,
    private queueCapacity: number,
  ) {}

  setLimits(maxConcurrent: number, queueCapacity: number): void {
    this.maxConcurrent = maxConcurrent;
    this.queueCapacity = queueCapacity;
  }

  /** Handlers admitted and not yet completed. */
  get inFlight(): number {
    return this.running;
  }

  /** Events waiting for onStart to finish. */
  get queued(): number {
    return this.queue.length;
  }

  /** Starts, queues (before onStart finished) or refuses a task. */
  submit(task: EventTask): 'started' | 'queued' | 'refused' {
    if (this.paused) {
      if (this.queue.length >= this.maxConcurrent + this.queueCapacity) return 'refused';
      this.queue.push(task);
      return 'queued';
    }
    // After start the queue only holds what waited for onStart; newcomers never pass it.
    if (this.running >= this.maxConcurrent || this.queue.length > 0) return 'refused';
    this.start(task);
    return 'started';
  }

  resume(): void {
    this.paused = false;
    this.pump();
  }

  /** Refuses a task that is still waiting; false when it is not waiting (running, done or unknown). */
  cancelQueued(task: EventTask): boolean {
    const at = this.queue.indexOf(task);
    if (at < 0) return false;
    this.queue.splice(at, 1);
    task.refuse('cancelled');
    return true;
  }

  /** Refuses every waiting task (they never started). */
  dropQueued(): void {
    for (const task of this.queue.splice(0)) task.refuse('stopping');
  }

  /** Resolves when no handler runs. */
  idle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private start(task: EventTask): void {
    this.running++;
    void task
      .run()
      .catch(() => undefined)
      .finally(() => {
        this.running--;
        this.pump();
        if (this.running === 0) for (const w of this.idleWaiters.splice(0)) w();
      });
  }

  private pump(): void {
    while (!this.paused && this.running < this.maxConcurrent && this.queue.length > 0) {
      this.start(this.queue.shift() as EventTask);
    }
  }
}
