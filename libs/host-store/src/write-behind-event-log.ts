import { SerialQueue, type EventLogQuery, type EventLogStore, type EventRecord } from '@host/host-core';
import { MemoryEventLogStore, type EventLogStoreOptions } from './memory-event-log-store';

/** A record that changed since the last write, with what its write must do. */
export interface ChangedRecord {
  record: EventRecord;
  /** `event`: the record takes the newest place; `update`: it is replaced where it is. */
  op: 'event' | 'update';
}

export interface WriteBehindOptions extends EventLogStoreOptions {
  /** How long changes wait to be written together (default 200 ms). */
  flushIntervalMilliseconds?: number;
  /** Called when writing fails; the records stay in memory and the next flush tries again. */
  onError?: (error: Error) => void;
  now?: () => number;
}

/**
 * The part every persistent event log shares: the newest `capacity` events in
 * memory, as the dispatcher needs them (synchronous reads, the very objects it
 * changes), and the changes written behind in batches every
 * `flushIntervalMilliseconds`, one entry per changed record however often it
 * changed. The event path never waits for storage. A failed write keeps its
 * batch, in front of what changed since, for the next one.
 */
export abstract class WriteBehindEventLog implements EventLogStore {
  readonly capacity: number;
  /** Records not yet written, in the order their writes must go. */
  protected dirty = new Map<string, ChangedRecord>();
  protected readonly writes = new SerialQueue();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  protected constructor(
    protected readonly window: MemoryEventLogStore,
    private readonly options: WriteBehindOptions,
  ) {
    this.capacity = window.capacity;
  }

  /** Writes the changed records that are still kept, oldest change first. */
  protected abstract write(batch: ChangedRecord[]): Promise<void>;

  /** Lets go of what writing holds (a file handle), after the last write. */
  protected async release(): Promise<void> {}

  append(record: EventRecord): void {
    const forgotten = this.window.append(record);
    if (forgotten) this.dirty.delete(forgotten.eventId);
    if (this.closed) return;
    // The write goes after those of every record appended before it.
    this.dirty.delete(record.eventId);
    this.dirty.set(record.eventId, { record, op: 'event' });
    this.schedule();
  }

  update(record: EventRecord): void {
    if (this.closed || !this.window.keeps(record) || this.dirty.has(record.eventId)) return;
    this.dirty.set(record.eventId, { record, op: 'update' });
    this.schedule();
  }

  get(eventId: string): EventRecord | undefined {
    return this.window.get(eventId);
  }

  list(query?: EventLogQuery): EventRecord[] {
    return this.window.list(query);
  }

  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    return this.writes.run(() => this.writeDirty());
  }

  async close(): Promise<void> {
    if (this.closed) return this.writes.idle();
    await this.flush().catch((e: Error) => this.options.onError?.(e));
    this.closed = true;
    this.dirty.clear();
    await this.writes.run(() => this.release());
  }

  protected now(): number {
    return (this.options.now ?? Date.now)();
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.writes.run(() => this.writeDirty()).catch((e: Error) => this.options.onError?.(e));
    }, this.options.flushIntervalMilliseconds ?? 200);
    // Pending writes must not keep the process alive; close() flushes them.
    this.timer.unref();
  }

  private async writeDirty(): Promise<void> {
    if (this.dirty.size === 0) return;
    const batch = this.dirty;
    this.dirty = new Map();
    try {
      // A record forgotten since it changed needs no write.
      await this.write([...batch.values()].filter((c) => this.window.keeps(c.record)));
    } catch (e) {
      // Written with the next batch, in front of what changed since.
      const merged = new Map(batch);
      for (const [id, entry] of this.dirty) {
        if (entry.op === 'event') merged.delete(id);
        if (entry.op === 'event' || !merged.has(id)) merged.set(id, entry);
      }
      this.dirty = merged;
      throw e;
    }
  }
}
