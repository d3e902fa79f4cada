import { interruptDeliveries, SerialQueue, type EventLogQuery, type EventLogStore, type EventRecord } from '@host/host-core';
import { MemoryEventLogStore, type EventLogStoreOptions } from '../memory-event-log-store';
import type { SqlDatabase } from './database';

export interface SqlEventLogStoreOptions extends EventLogStoreOptions {
  /** Which host writes (kept with each event); a host marks only its own unfinished deliveries interrupted on start. */
  replica?: string;
  /** How long changes wait to be written together (default 200 ms). */
  flushIntervalMilliseconds?: number;
  /** Called when writing fails; the records stay in memory and the next flush tries again. */
  onError?: (error: Error) => void;
  now?: () => number;
}

/**
 * The event log in SQL: the newest `capacity` events in memory, as the
 * dispatcher needs them (synchronous reads, the very objects it changes),
 * written behind in batches. Every `flushIntervalMilliseconds` the records
 * that changed go to `host_events` in one statement, however many there are
 * and however often each changed, and rows beyond the capacity are deleted.
 * The event path never waits for the database.
 *
 * On open the newest `capacity` rows are read back, and deliveries this host
 * (`replica`) left unfinished become `interrupted`.
 */
export class SqlEventLogStore implements EventLogStore {
  readonly capacity: number;
  private dirty = new Map<string, { record: EventRecord; op: 'event' | 'update' }>();
  private readonly writes = new SerialQueue();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly replica: string;

  private constructor(
    private readonly db: SqlDatabase,
    private readonly window: MemoryEventLogStore,
    private readonly o: SqlEventLogStoreOptions,
  ) {
    this.capacity = window.capacity;
    this.replica = o.replica ?? 'host';
  }

  static async open(db: SqlDatabase, options: SqlEventLogStoreOptions = {}): Promise<SqlEventLogStore> {
    const window = new MemoryEventLogStore(options);
    const store = new SqlEventLogStore(db, window, options);
    const rows = await db.query<{ record: EventRecord; replica: string }>(
      'SELECT record, replica FROM (SELECT record, replica, seq FROM host_events ORDER BY seq DESC LIMIT $1) newest ORDER BY seq',
      [window.capacity],
    );
    const at = new Date((options.now ?? Date.now)()).toISOString();
    const interrupted: EventRecord[] = [];
    for (const { record, replica } of rows) {
      if (replica === store.replica && interruptDeliveries(record, at)) interrupted.push(record);
      window.append(record);
    }
    for (const r of interrupted) store.dirty.set(r.eventId, { record: r, op: 'update' });
    await store.flush();
    return store;
  }

  append(record: EventRecord): void {
    const forgotten = this.window.append(record);
    if (forgotten) this.dirty.delete(forgotten.eventId);
    if (this.closed) return;
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
    await this.flush().catch((e: Error) => this.o.onError?.(e));
    this.closed = true;
    this.dirty.clear();
    await this.writes.idle();
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.writes.run(() => this.writeDirty()).catch((e: Error) => this.o.onError?.(e));
    }, this.o.flushIntervalMilliseconds ?? 200);
    this.timer.unref();
  }

  private async writeDirty(): Promise<void> {
    if (this.dirty.size === 0) return;
    const batch = this.dirty;
    this.dirty = new Map();
    // An `event` row takes the newest place (a new sequence number); an `update` keeps its place.
    const events: EventRecord[] = [];
    const updates: EventRecord[] = [];
    for (const { record, op } of batch.values()) {
      if (!this.window.keeps(record)) continue;
      (op === 'event' ? events : updates).push(record);
    }
    try {
      await this.db.transaction(async (tx) => {
        if (events.length) {
          await tx.query(
            `INSERT INTO host_events (event_id, replica, record)
             SELECT r->>'eventId', $2, r FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x(r, n) ORDER BY n
             ON CONFLICT (event_id) DO UPDATE SET record = EXCLUDED.record, replica = EXCLUDED.replica, seq = nextval('host_events_seq')`,
            [JSON.stringify(events), this.replica],
          );
        }
        if (updates.length) {
          await tx.query(
            `UPDATE host_events e SET record = x.r FROM jsonb_array_elements($1::jsonb) AS x(r) WHERE e.event_id = x.r->>'eventId'`,
            [JSON.stringify(updates)],
          );
        }
        if (events.length) {
          // Bounded: only the newest `capacity` rows stay.
          await tx.query('DELETE FROM host_events WHERE seq <= (SELECT seq FROM host_events ORDER BY seq DESC OFFSET $1 LIMIT 1)', [
            this.capacity,
          ]);
        }
      });
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
