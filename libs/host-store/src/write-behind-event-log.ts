import { SerialQueue, type EventLogQuery, type EventLogStore, type EventRecord } from '@host/host-core';
import { MemoryEventLogStore, type EventLogStoreOptions } from './memory-event-log-store';

/** A record that changed since the last write, with what its write must do. */
export interface ChangedRecord {
  record: EventRecord;
  /** `event`: the record takes the newest place; `update`: it is replaced where it is. */
  op: 'event' | 'update';
}

/** A changed record as a write gets it: with its JSON text, made once. */
export interface SerialisedChange extends ChangedRecord {
  json: string;
}

export interface WriteBehindOptions extends EventLogStoreOptions {
  /** How long changes wait to be written together (default 200 ms). */
  flushIntervalMilliseconds?: number;
  /**
   * Called with the cause when writing starts failing (the records stay in memory and the next flush tries
   * again; further failures in a row are only counted), and once for each record that cannot be serialised
   * (it is kept in memory only, and never holds up the records after it).
   */
  onError?: (error: Error) => void;
  now?: () => number;
}

/**
 * The part every persistent event log shares: the newest `capacity` events in
 * memory, as the dispatcher needs them (synchronous reads, the very objects it
 * changes), and the changes written behind in batches every
 * `flushIntervalMilliseconds`, one entry per changed record however often it
 * changed. The event path never waits for storage. A failed write keeps its
 * batch, in front of what changed since, for the next one. Each record is
 * serialised on its own, so one that cannot be (a value nested past the
 * stack, a cycle) is left out and reported once, and every other is written.
 */
export abstract class WriteBehindEventLog implements EventLogStore {
  readonly capacity: number;
  /** Records not yet written, in the order their writes must go. */
  protected dirty = new Map<string, ChangedRecord>();
  protected readonly writes = new SerialQueue();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Records that could not be serialised: kept in memory, never written. */
  private readonly unwritable = new WeakSet<EventRecord>();
  private failing = false;
  /** Writes that failed (each retried with the next flush). */
  failedWrites = 0;
  /** Records left out of every write because they cannot be serialised. */
  unwritableRecords = 0;

  protected constructor(
    protected readonly window: MemoryEventLogStore,
    private readonly options: WriteBehindOptions,
  ) {
    this.capacity = window.capacity;
  }

  /** Writes the changed records that are still kept, oldest change first. */
  protected abstract write(batch: SerialisedChange[]): Promise<void>;

  /** The record's JSON text, or undefined (reported once) when it cannot be serialised. */
  protected serialise(record: EventRecord): string | undefined {
    if (this.unwritable.has(record)) return undefined;
    try {
      return JSON.stringify(record);
    } catch (e) {
      this.unwritable.add(record);
      this.unwritableRecords++;
      this.options.onError?.(
        new Error(`event ${record.eventId} cannot be written and is kept in memory only: ${(e as Error)?.message ?? String(e)}`),
      );
      return undefined;
    }
  }

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
    await this.flush().catch(() => undefined);
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
      this.writes.run(() => this.writeDirty()).catch(() => undefined);
    }, this.options.flushIntervalMilliseconds ?? 200);
    // Pending writes must not keep the process alive; close() flushes them.
    this.timer.unref();
  }

  private async writeDirty(): Promise<void> {
    if (this.dirty.size === 0) return;
    const batch = this.dirty;
    this.dirty = new Map();
    try {
      const changes: SerialisedChange[] = [];
      for (const c of batch.values()) {
        // A record forgotten since it changed needs no write.
        if (!this.window.keeps(c.record)) continue;
        const json = this.serialise(c.record);
        if (json !== undefined) changes.push({ ...c, json });
      }
      await this.write(changes);
      this.failing = false;
    } catch (e) {
      this.failedWrites++;
      if (!this.failing) {
        this.failing = true;
        this.options.onError?.(e instanceof Error ? e : new Error(String(e)));
      }
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
