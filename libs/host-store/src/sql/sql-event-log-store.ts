import { interruptDeliveries, type EventRecord } from '@host/host-core';
import { MemoryEventLogStore } from '../memory-event-log-store';
import { WriteBehindEventLog, type ChangedRecord, type WriteBehindOptions } from '../write-behind-event-log';
import type { SqlDatabase } from './database';

export interface SqlEventLogStoreOptions extends WriteBehindOptions {
  /** Which host writes (kept with each event); a host marks only its own unfinished deliveries interrupted on start. */
  replica?: string;
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
export class SqlEventLogStore extends WriteBehindEventLog {
  private readonly replica: string;

  private constructor(
    private readonly db: SqlDatabase,
    window: MemoryEventLogStore,
    o: SqlEventLogStoreOptions,
  ) {
    super(window, o);
    this.replica = o.replica ?? 'host';
  }

  static async open(db: SqlDatabase, options: SqlEventLogStoreOptions = {}): Promise<SqlEventLogStore> {
    const window = new MemoryEventLogStore(options);
    const store = new SqlEventLogStore(db, window, options);
    const rows = await db.query<{ record: EventRecord; replica: string }>(
      'SELECT record, replica FROM (SELECT record, replica, seq FROM host_events ORDER BY seq DESC LIMIT $1) newest ORDER BY seq',
      [window.capacity],
    );
    const at = new Date(store.now()).toISOString();
    const interrupted: EventRecord[] = [];
    for (const { record, replica } of rows) {
      if (replica === store.replica && interruptDeliveries(record, at)) interrupted.push(record);
      window.append(record);
    }
    for (const r of interrupted) store.dirty.set(r.eventId, { record: r, op: 'update' });
    await store.flush();
    return store;
  }

  protected async write(batch: ChangedRecord[]): Promise<void> {
    // An `event` row takes the newest place (a new sequence number); an `update` keeps its place.
    const events: EventRecord[] = [];
    const updates: EventRecord[] = [];
    for (const { record, op } of batch) (op === 'event' ? events : updates).push(record);
    if (events.length === 0 && updates.length === 0) return;
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
  }
}
