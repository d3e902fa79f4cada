/**
 * Runs event tasks with at most `maxConcurrent` at once and at most
 * `queueCapacity` waiting; the host's runtime limits set both. A task that
 * finds the queue full is refused (the runtime answers it with Overloaded).
 * While paused (before onStart finished) tasks queue but do not start.
 */
export class EventScheduler {
  private running = 0;
  private readonly queue: Array<{ run: () => Promise<void>; refuse: () => void }> = [];
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

  get inFlight(): number {
    return this.running;
  }

  get queued(): number {
    return this.queue.length;
  }

  /** Starts, queues or refuses a task. `refuse` is called if a queued task is dropped later (stop). */
  submit(run: () => Promise<void>, refuse: () => void): 'started' | 'queued' | 'refused' {
    if (!this.paused && this.running < this.maxConcurrent) {
      this.start(run);
      return 'started';
    }
    if (this.queue.length >= this.queueCapacity) return 'refused';
    this.queue.push({ run, refuse });
    return 'queued';
  }

  resume(): void {
    this.paused = false;
    this.pump();
  }

  /** Refuses every queued task (they never started). */
  dropQueued(): void {
    for (const task of this.queue.splice(0)) task.refuse();
  }

  /** Resolves when no task runs. */
  idle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private start(run: () => Promise<void>): void {
    this.running++;
    void run()
      .catch(() => undefined)
      .finally(() => {
        this.running--;
        this.pump();
        if (this.running === 0) for (const w of this.idleWaiters.splice(0)) w();
      });
  }

  private pump(): void {
    while (!this.paused && this.running < this.maxConcurrent && this.queue.length > 0) {
      this.start((this.queue.shift() as { run: () => Promise<void> }).run);
    }
  }
}
