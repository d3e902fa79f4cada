import { interruptDeliveries, type EventLogQuery, type EventRecord } from '@host/host-core';
import { MemoryEventLogStore } from '../memory-event-log-store';
import { WriteBehindEventLog, type SerialisedChange, type WriteBehindOptions } from '../write-behind-event-log';
import type { SqlDatabase } from './database';

export interface SqlEventLogStoreOptions extends WriteBehindOptions {
  /** Which host writes (kept with each event); a host marks only its own unfinished deliveries interrupted on start. */
  replica?: string;
  /**
   * The embedded database has no autovacuum: `host_events` and the other tables every event passes through
   * ({@link EVENT_TABLES}) are vacuumed after this many rows were written or replaced (default: the capacity, at
   * least 500, so about once per turn of the log). A PostgreSQL server vacuums itself.
   */
  vacuumEveryRows?: number;
}

/**
 * The tables each event adds rows to and removes or replaces them from again (the event log, the inbox, the durable
 * queue and the records of replies and sends), vacuumed together on the embedded database: without autovacuum the
 * space of their removed rows would never be reused, and each would grow with every event.
 */
export const EVENT_TABLES = ['host_events', 'host_event_inbox', 'host_event_queue', 'host_event_replies', 'host_event_sends'] as const;

/**
 * The event log in SQL: the newest `capacity` events in memory, as the
 * dispatcher needs them (synchronous reads, the very objects it changes),
 * written behind in batches. Every `flushIntervalMilliseconds` the records
 * that changed go to `host_events` in one statement, however many there are
 * and however often each changed, and rows beyond the capacity are deleted.
 * The event path never waits for the database.
 *
 * On open the newest `capacity` rows are read back, and deliveries this host
 * (`replica`) left unfinished become `interrupted`, except those of events
 * still in its inbox ({@link SqlEventInbox}), which it routes again. A record
 * written with every delivery final takes its event out of the inbox in the
 * same transaction.
 */
export class SqlEventLogStore extends WriteBehindEventLog {
  private readonly replica: string;
  private readonly vacuumEveryRows: number;
  private rowsSinceVacuum = 0;
  private readonly trimEveryRows: number;
  private rowsSinceTrim = 0;

  private constructor(
    private readonly db: SqlDatabase,
    window: MemoryEventLogStore,
    o: SqlEventLogStoreOptions,
  ) {
    super(window, o);
    this.replica = o.replica ?? 'host';
    this.vacuumEveryRows = o.vacuumEveryRows ?? Math.max(500, window.capacity);
    this.trimEveryRows = Math.max(1, Math.ceil(window.capacity / 10));
  }

  static async open(db: SqlDatabase, options: SqlEventLogStoreOptions = {}): Promise<SqlEventLogStore> {
    const window = new MemoryEventLogStore(options);
    const store = new SqlEventLogStore(db, window, options);
    const rows = await db.query<{ record: EventRecord; replica: string }>(
      'SELECT record, replica FROM (SELECT record, replica, seq FROM host_events ORDER BY seq DESC LIMIT $1) newest ORDER BY seq',
      [window.capacity],
    );
    // Events still in the inbox are routed again by this host (their deliveries end then, as they really do).
    const inbox = new Set(
      (await db.query<{ event_id: string }>('SELECT event_id FROM host_event_inbox WHERE origin = $1', [store.replica])).map(
        (r) => r.event_id,
      ),
    );
    const at = new Date(store.now()).toISOString();
    const interrupted: EventRecord[] = [];
    for (const { record, replica } of rows) {
      if (replica === store.replica && !inbox.has(record.eventId) && interruptDeliveries(record, at)) interrupted.push(record);
      window.append(record);
    }
    for (const r of interrupted) store.dirty.set(r.eventId, { record: r, op: 'update' });
    await store.flush();
    return store;
  }

  /**
   * The newest records of every host writing to this database, newest first
   * (replicas on one server each write the events they took, with every
   * plugin's deliveries and replies wherever they ran): this host's changes are
   * written first, so what it shows itself is in the answer.
   */
  async listShared(query: EventLogQuery = {}): Promise<EventRecord[]> {
    await this.flush();
    const limit = Math.min(query.limit ?? 100, this.capacity);
    const rows = await this.db.query<{ record: EventRecord }>(
      `SELECT record FROM host_events WHERE $2::text IS NULL OR record->'recipients' ? $2 ORDER BY seq DESC LIMIT $1`,
      [limit, query.pluginId ?? null],
    );
    return rows.map((r) => r.record);
  }

  protected async write(batch: SerialisedChange[]): Promise<void> {
    // An `event` row takes the newest place (a new sequence number); an `update` keeps its place.
    const events: string[] = [];
    const updates: string[] = [];
    for (const { json, op } of batch) (op === 'event' ? events : updates).push(json);
    if (events.length === 0 && updates.length === 0) return;
    // Events whose record is written final leave the inbox in the same statement: an accepted event is always in
    // one or the other.
    const final = batch.flatMap(({ record }) => (record.completedAt !== null ? [record.eventId] : []));
    this.rowsSinceTrim += events.length;
    // Bounded: only the newest `capacity` rows stay. Trimmed once a tenth of the capacity was added (the table
    // holds at most that much more meanwhile), not at every write: finding the cut walks `capacity` index entries.
    const trim = this.rowsSinceTrim >= this.trimEveryRows;
    if (trim) this.rowsSinceTrim = 0;
    // One statement (its parts are data-modifying WITH clauses, each run once and to completion, in one implicit
    // transaction): on the embedded database every call costs about as much as the work it carries, so a write is
    // one call whatever it holds. No two parts touch the same row: a record is either new or an update in a batch,
    // and the trim (which sees the table as it was before this statement) leaves the batch's own rows alone.
    const parts: string[] = [];
    const params: unknown[] = [];
    const param = (value: unknown): string => `$${params.push(value)}`;
    if (events.length)
      parts.push(`added AS (
        INSERT INTO host_events (event_id, replica, record)
          SELECT r->>'eventId', ${param(this.replica)}, r FROM jsonb_array_elements(${param(`[${events.join(',')}]`)}::jsonb) WITH ORDINALITY AS x(r, n) ORDER BY n
          ON CONFLICT (event_id) DO UPDATE SET record = EXCLUDED.record, replica = EXCLUDED.replica, seq = nextval('host_events_seq'))`);
    if (updates.length)
      parts.push(`changed AS (
        UPDATE host_events e SET record = x.r FROM jsonb_array_elements(${param(`[${updates.join(',')}]`)}::jsonb) AS x(r)
          WHERE e.event_id = x.r->>'eventId')`);
    if (final.length) parts.push(`taken AS (DELETE FROM host_event_inbox WHERE event_id = ANY(${param(final)}::text[]))`);
    if (trim)
      parts.push(`trimmed AS (
        DELETE FROM host_events WHERE seq <= (SELECT seq FROM host_events ORDER BY seq DESC OFFSET ${param(this.capacity)} LIMIT 1)
          AND NOT event_id = ANY(${param(batch.map(({ record }) => record.eventId))}::text[]))`);
    await this.db.query(`WITH ${parts.join(',\n')}\nSELECT 1`, params);
    this.rowsSinceVacuum += events.length + updates.length;
    if (this.db.kind === 'embedded' && this.rowsSinceVacuum >= this.vacuumEveryRows) {
      // PGlite runs PostgreSQL in single-user mode, without autovacuum: the
      // space of deleted and replaced rows is reused only once VACUUM marks it
      // free, so without this the tables and their indexes would grow with every event.
      this.rowsSinceVacuum = 0;
      await this.db.query(`VACUUM ${EVENT_TABLES.join(', ')}`);
    }
  }
}
