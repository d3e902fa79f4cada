import type { EventInbox } from '@host/host-core';
import type { MessageEvent } from '@host/protocol';
import { Batcher } from './batcher';
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

  /**
   * Takes over the events of replicas that are gone: those whose heartbeat
   * (`host_replicas`, which the cluster's lease round writes) ended, or that never wrote one, accepted
   * more than `graceMilliseconds` ago (a lease's time: a replica that was only
   * slow beats again within it). Each row is taken by one replica (the update
   * locks it; a second taker finds the new origin alive). Answers the events,
   * for this replica to route again: their queue rows say what was delivered
   * already, so nothing is delivered twice. Rows of replicas whose name comes
   * back are not theirs any more.
   */
  async adoptOrphans(graceMilliseconds: number): Promise<MessageEvent[]> {
    const rows = await this.db.query<{ event: MessageEvent }>(
      `WITH taken AS (
         UPDATE host_event_inbox i SET origin = $1
          WHERE i.origin <> $1 AND i.accepted_at < now() - make_interval(secs => $2::double precision / 1000)
            AND NOT EXISTS (SELECT 1 FROM host_replicas r WHERE r.name = i.origin AND r.expires_at >= now())
          RETURNING i.event, i.accepted_at, i.event_id)
       SELECT event FROM taken ORDER BY accepted_at, event_id`,
      [this.origin, graceMilliseconds],
    );
    return rows.map((r) => r.event);
  }

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
