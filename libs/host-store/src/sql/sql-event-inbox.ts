import type { EventInbox } from '@host/host-core';
import type { MessageEvent } from '@host/protocol';
import { Batcher } from './cluster-tables';
import type { SqlDatabase } from './database';

/**
 * The inbox in SQL (`host_event_inbox`): rows added together in one statement
 * while earlier ones are on their way, so the write an event waits for before
 * it is answered is shared by the events accepted meanwhile. A row leaves in
 * the statement batch that writes its final event-log record
 * ({@link SqlEventLogStore}), so an event is always in one or the other.
 */
export class SqlEventInbox implements EventInbox {
  constructor(
    private readonly db: SqlDatabase,
    readonly origin: string,
  ) {}

  add(event: MessageEvent): Promise<void> {
    return this.adds.push(event);
  }

  private readonly adds = new Batcher<MessageEvent, void>(
    async (events) => {
      await this.db.query(
        `INSERT INTO host_event_inbox (event_id, origin, event)
         SELECT e->>'eventId', $2, e FROM jsonb_array_elements($1::jsonb) AS x(e)
       ON CONFLICT (event_id) DO NOTHING`,
        [JSON.stringify(events), this.origin],
      );
      return events.map(() => undefined);
    },
    () => Batcher.parallelOn(this.db),
  );

  async unsettled(): Promise<MessageEvent[]> {
    const rows = await this.db.query<{ event: MessageEvent }>(
      'SELECT event FROM host_event_inbox WHERE origin = $1 ORDER BY accepted_at, event_id',
      [this.origin],
    );
    return rows.map((r) => r.event);
  }

  /** How many events wait here (this host's), for tests and the start-up log. */
  async size(): Promise<number> {
    const rows = await this.db.query<{ n: string }>('SELECT count(*) AS n FROM host_event_inbox WHERE origin = $1', [this.origin]);
    return Number(rows[0]?.n ?? 0);
  }
}
