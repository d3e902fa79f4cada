/**
 * Runs tasks one at a time, in the order they were queued: registry writes,
 * log-file appends, outbound messages of one plugin. A task that fails does
 * not stop the ones after it; only its own caller sees the failure.
 */
export class SerialQueue {
  // Never rejects, so the next task always runs.
  private tail: Promise<unknown> = Promise.resolve();

  /** Queues `task`; the promise settles as the task does. */
  run<T>(task: () => T | PromiseLike<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves once every queued task has settled, including tasks queued while waiting. */
  async idle(): Promise<void> {
    let tail: Promise<unknown>;
    do {
      tail = this.tail;
      await tail;
    } while (tail !== this.tail);
  }
}
