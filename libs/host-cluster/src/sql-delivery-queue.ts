import { randomUUID } from 'node:crypto';
import type { CompletionOutcome, DeliveryOutcome } from '@host/host-core';
import { Batcher, type SqlDatabase } from '@host/host-store';
import type { MessageEvent } from '@host/protocol';
import {
  addressed,
  addressTo,
  NOTICE_LIMIT,
  QUEUE_CHANNEL,
  readNotice,
  type ControlAction,
  type ControlAnswer,
  type QueueNotice,
} from './queue-notices';
import { leaseFence } from './sql-leases';
import { SqlReplyRecords, type RecordedReply, type RecordedSend, type UnsentMessage } from './sql-reply-records';

/** What a queued delivery is at: waiting, being delivered, decided (ACKed), or final. */
export type QueueState = 'pending' | 'claimed' | 'decided' | 'done';

/** One event for one plugin in the durable queue. */
export interface QueuedDelivery {
  eventId: string;
  pluginId: string;
  origin: string;
  /** The event as the plugin gets it (with its command match). */
  event: MessageEvent;
  state: QueueState;
  claimedBy: string | null;
  attempts: number;
  /** The plugin's decision, once the holder recorded it. */
  decision: DeliveryOutcome | null;
  /** How the work ended, once the row is final. */
  completion: CompletionOutcome | null;
}

/** A row of `host_event_queue` as the statements below read it: its JSON columns hold what the parts wrote. */
type Row = {
  event_id: string;
  plugin_id: string;
  origin: string;
  event: MessageEvent;
  state: QueueState;
  claimed_by: string | null;
  attempts: number;
  decision: DeliveryOutcome | null;
  completion: CompletionOutcome | null;
};
const fromRow = (r: Row): QueuedDelivery => ({
  eventId: r.event_id,
  pluginId: r.plugin_id,
  origin: r.origin,
  event: r.event,
  state: r.state,
  claimedBy: r.claimed_by,
  attempts: r.attempts,
  decision: r.decision,
  completion: r.completion,
});

/**
 * The durable delivery queue of stdio plugins (`host_event_queue`), keyed by
 * (event, plugin): a row is written when a replica accepts the event, claimed
 * by the replica holding the plugin's lease (`FOR UPDATE SKIP LOCKED`), and
 * carries the decision and the completion back. Each state change is
 * announced on {@link QUEUE_CHANNEL} in its transaction: new rows to every
 * replica, decisions and outcomes to the event's origin only.
 *
 * What the parts give it (events, decisions, outbound records) is stored as
 * JSON as given; what it reads back is typed here, once, as the parts write it.
 */
export class SqlDeliveryQueue {
  /**
   * @param replica this host's name: the origin of the events it queues.
   * @param claimer names this process in the rows it claims: the replica's name
   *   and a mark of this start, so rows a previous run of the same replica left
   *   claimed are taken over like those of any replica that died.
   */
  constructor(
    private readonly db: SqlDatabase,
    readonly replica: string,
    readonly claimer: string = `${replica}/${randomUUID().slice(0, 8)}`,
  ) {
    this.records = new SqlReplyRecords(db, replica, claimer);
  }

  /** The replies and sends of the plugins' handlings, recorded under this process's claimer. */
  readonly records: SqlReplyRecords;

  /**
   * Queues `event` for `pluginId` unless the pair is queued already (a
   * provider's retry through another replica); answers whether it was new.
   * `claim` queues it claimed by this replica (it holds the lease and delivers it now).
   */
  async enqueue(eventId: string, pluginId: string, event: unknown, claim = false): Promise<boolean> {
    return this.enqueues.push({ e: eventId, p: pluginId, ev: event, claim });
  }

  /**
   * Rows queued together (the calls made while the statements before were on
   * their way): one statement writes them all and announces each plugin with
   * new rows to claim once.
   */
  private readonly enqueues = new Batcher<{ e: string; p: string; ev: unknown; claim: boolean }, boolean>(
    async (items) => {
      const rows = await this.db.query<{ i: number }>(
        `WITH x AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(i integer, e text, p text, ev jsonb, claim boolean)),
       added AS (
         INSERT INTO host_event_queue (event_id, plugin_id, origin, event, state, claimed_by, attempts)
           SELECT e, p, $2, ev, CASE WHEN claim THEN 'claimed' ELSE 'pending' END, CASE WHEN claim THEN $3 END, CASE WHEN claim THEN 1 ELSE 0 END
             FROM x ORDER BY i
         ON CONFLICT (event_id, plugin_id) DO NOTHING RETURNING event_id, plugin_id, state),
       told AS (SELECT count(*) AS n FROM (SELECT pg_notify($4, json_build_object('k', 'new', 'p', plugin_id)::text)
                                             FROM (SELECT DISTINCT plugin_id FROM added WHERE state = 'pending') d) t)
       -- The same pair twice in one batch: the first call queued it, the other finds it queued.
       SELECT DISTINCT ON (x.e, x.p) x.i, told.n FROM added JOIN x ON x.e = added.event_id AND x.p = added.plugin_id, told
        ORDER BY x.e, x.p, x.i`,
        [JSON.stringify(items.map((item, i) => ({ i, ...item }))), this.replica, this.claimer, QUEUE_CHANNEL],
      );
      const added = new Set(rows.map((r) => r.i));
      return items.map((_, i) => added.has(i));
    },
    () => Batcher.parallelOn(this.db),
  );

  /**
   * Records a delivery this process made without a queue row before it, as a
   * final row claimed by this process, unless the pair is queued already;
   * answers whether it was written. For a host alone delivering its own event
   * to a plugin it runs: the inbox keeps the event until its final record, so
   * a crash before this write routes the event again and its delivery is made
   * again (its replies recorded before are not sent twice); one write per
   * delivery instead of a claimed row and its update.
   */
  async recordDelivered(eventId: string, pluginId: string, event: unknown, decision: unknown, completion: unknown): Promise<boolean> {
    return this.delivered.push({ e: eventId, p: pluginId, ev: event, d: decision, c: completion });
  }

  /** Deliveries recorded together: one statement writes their final rows. */
  private readonly delivered = new Batcher<{ e: string; p: string; ev: unknown; d: unknown; c: unknown }, boolean>(
    async (items) => {
      const rows = await this.db.query<{ i: number }>(
        `WITH x AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(i integer, e text, p text, ev jsonb, d jsonb, c jsonb)),
       added AS (
         INSERT INTO host_event_queue (event_id, plugin_id, origin, event, state, claimed_by, attempts, decision, completion, done_at)
           SELECT e, p, $2, ev, 'done', $3, 1, d, c, now() FROM x ORDER BY i
         ON CONFLICT (event_id, plugin_id) DO NOTHING RETURNING event_id, plugin_id)
       SELECT DISTINCT ON (x.e, x.p) x.i FROM added JOIN x ON x.e = added.event_id AND x.p = added.plugin_id ORDER BY x.e, x.p, x.i`,
        [JSON.stringify(items.map((item, i) => ({ i, ...item }))), this.replica, this.claimer],
      );
      const added = new Set(rows.map((r) => r.i));
      return items.map((_, i) => added.has(i));
    },
    () => Batcher.parallelOn(this.db),
  );

  /**
   * Claims up to `limit` waiting rows of `pluginId` (oldest first) for this
   * replica, with rows another replica claimed and left unfinished when
   * `takeOrphans` (this replica took the lease over from it).
   */
  async claim(pluginId: string, limit: number, takeOrphans: boolean, epoch?: number): Promise<QueuedDelivery[]> {
    if (limit <= 0) return [];
    const rows = await this.db.query<Row>(
      `UPDATE host_event_queue q SET state = 'claimed', claimed_by = $2, attempts = q.attempts + 1
         FROM (SELECT event_id, plugin_id FROM host_event_queue
                WHERE plugin_id = $1 AND (state = 'pending' OR ($4 AND state IN ('claimed', 'decided') AND claimed_by <> $2))
                  AND ${leaseFence('$1', '$5', '$6')}
                ORDER BY seq LIMIT $3 FOR UPDATE SKIP LOCKED) c
        WHERE q.event_id = c.event_id AND q.plugin_id = c.plugin_id
        RETURNING q.event_id, q.plugin_id, q.origin, q.event, q.state, q.claimed_by, q.attempts, q.decision, q.completion`,
      [pluginId, this.claimer, limit, takeOrphans, epoch ?? null, this.replica],
    );
    return rows.map(fromRow);
  }

  /** Records the plugin's decision (once); tells the origin. */
  async decide(eventId: string, pluginId: string, origin: string, decision: unknown): Promise<void> {
    await this.decisions.push({
      e: eventId,
      p: pluginId,
      d: decision,
      tell: addressed(origin, { k: 'decided', e: eventId, p: pluginId, o: origin }, { d: decision }),
    });
  }

  /** Decisions recorded together, in one statement, each origin told. */
  private readonly decisions = new Batcher<{ e: string; p: string; d: unknown; tell: string }, void>(
    async (items) => {
      await this.db.query(
        `WITH x AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(e text, p text, d jsonb, tell text)),
       decided AS (
         UPDATE host_event_queue q SET state = 'decided', decision = x.d
           FROM x WHERE q.event_id = x.e AND q.plugin_id = x.p AND q.state = 'claimed' AND q.claimed_by = $2 RETURNING x.tell)
       SELECT pg_notify($3, tell) FROM decided`,
        [JSON.stringify(items), this.claimer, QUEUE_CHANNEL],
      );
      return items.map(() => undefined);
    },
    () => Batcher.parallelOn(this.db),
  );

  /**
   * Records the final outcome (once: a row already final is left as it is),
   * with the decision when none was recorded; answers whether this call made it final.
   * `anyHolder`: the origin gives up on a row nobody delivered (its own deadline).
   * `replies`: the outbound records of every reply of the plugin to the event
   * (the holder sent them all in this handling): carried in the notification
   * with the recorded decision and completion when they fit, so the origin
   * answers without reading the row and its replies.
   */
  async finish(
    eventId: string,
    pluginId: string,
    origin: string,
    decision: unknown,
    completion: unknown,
    anyHolder = false,
    replies?: readonly unknown[],
  ): Promise<boolean> {
    const tell = origin !== this.replica || anyHolder;
    return this.finishes.push({
      e: eventId,
      p: pluginId,
      d: decision,
      c: completion,
      a: anyHolder,
      tell: tell ? ({ k: 'done', e: eventId, p: pluginId, o: origin } satisfies QueueNotice) : null,
      to: addressTo(origin),
      r: replies ?? null,
    });
  }

  /**
   * Outcomes recorded together: one statement makes each row final (unless it
   * was already) and tells each origin, the notification carrying the row as
   * written (the decision recorded first wins) when it fits in one, else only its key.
   * `to` opens the notification with its origin's address ({@link addressTo}), the
   * row's members following it.
   */
  private readonly finishes = new Batcher<
    { e: string; p: string; d: unknown; c: unknown; a: boolean; tell: QueueNotice | null; to: string; r: readonly unknown[] | null },
    boolean
  >(
    async (items) => {
      const rows = await this.db.query<{ i: number }>(
        `WITH x AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(i integer, e text, p text, d jsonb, c jsonb, a boolean, tell jsonb, "to" text, r jsonb)),
       finished AS (
         UPDATE host_event_queue q SET state = 'done', decision = coalesce(q.decision, x.d), completion = x.c, done_at = now()
           FROM x WHERE q.event_id = x.e AND q.plugin_id = x.p AND q.state <> 'done' AND (x.a OR q.claimed_by = $2)
         RETURNING x.i, x.tell, x."to", x.r, q.decision, q.completion)
       SELECT i, CASE WHEN tell IS NULL THEN NULL
                      ELSE pg_notify($3, CASE WHEN octet_length(full_notice) < ${NOTICE_LIMIT} THEN full_notice
                                              ELSE "to" || substr(tell::text, 2) END) END
         FROM finished, LATERAL (SELECT "to" || substr((tell || jsonb_build_object('d', decision, 'c', completion)
                                         || CASE WHEN r IS NULL OR jsonb_typeof(r) = 'null' THEN '{}'::jsonb ELSE jsonb_build_object('r', r) END)::text, 2)
                                         AS full_notice) n`,
        [JSON.stringify(items.map((item, i) => ({ i, ...item }))), this.claimer, QUEUE_CHANNEL],
      );
      const done = new Set(rows.map((r) => r.i));
      return items.map((_, i) => done.has(i));
    },
    () => Batcher.parallelOn(this.db),
  );

  async get(eventId: string, pluginId: string): Promise<QueuedDelivery | undefined> {
    const rows = await this.db.query<Row>(
      'SELECT event_id, plugin_id, origin, event, state, claimed_by, attempts, decision, completion FROM host_event_queue WHERE event_id = $1 AND plugin_id = $2',
      [eventId, pluginId],
    );
    return rows[0] && fromRow(rows[0]);
  }

  /** Rows of `pairs` that are decided or final (an origin catching up after lost notifications). */
  async settled(pairs: readonly { eventId: string; pluginId: string }[]): Promise<QueuedDelivery[]> {
    if (pairs.length === 0) return [];
    const rows = await this.db.query<Row>(
      `SELECT q.event_id, q.plugin_id, q.origin, q.event, q.state, q.claimed_by, q.attempts, q.decision, q.completion
         FROM host_event_queue q JOIN unnest($1::text[], $2::text[]) AS w(e, p) ON q.event_id = w.e AND q.plugin_id = w.p
        WHERE q.state IN ('decided', 'done')`,
      [pairs.map((p) => p.eventId), pairs.map((p) => p.pluginId)],
    );
    return rows.map(fromRow);
  }

  /** Plugins with rows waiting to be claimed (or claimed by another replica and unfinished). */
  async waitingPlugins(): Promise<string[]> {
    const rows = await this.db.query<{ plugin_id: string }>(
      `SELECT DISTINCT plugin_id FROM host_event_queue WHERE state <> 'done' AND (state = 'pending' OR claimed_by <> $1)`,
      [this.claimer],
    );
    return rows.map((r) => r.plugin_id);
  }

  /**
   * The origins other than this replica of the rows queued for `eventIds`: the replicas that queued events
   * this one took over, whose outcomes are announced to those replicas' names.
   */
  async originsOf(eventIds: readonly string[]): Promise<string[]> {
    if (eventIds.length === 0) return [];
    const rows = await this.db.query<{ origin: string }>(
      'SELECT DISTINCT origin FROM host_event_queue WHERE event_id = ANY($1::text[]) AND origin <> $2',
      [eventIds, this.replica],
    );
    return rows.map((r) => r.origin);
  }

  /** See {@link SqlReplyRecords.recordReply}. */
  recordReply(...args: Parameters<SqlReplyRecords['recordReply']>): Promise<{ fresh: boolean; reply: RecordedReply }> {
    return this.records.recordReply(...args);
  }

  /** See {@link SqlReplyRecords.noteReply}. */
  noteReply(...args: Parameters<SqlReplyRecords['noteReply']>): Promise<void> {
    return this.records.noteReply(...args);
  }

  /** See {@link SqlReplyRecords.recordSend}. */
  recordSend(...args: Parameters<SqlReplyRecords['recordSend']>): Promise<{ fresh: boolean; send: RecordedSend }> {
    return this.records.recordSend(...args);
  }

  /** See {@link SqlReplyRecords.noteSend}. */
  noteSend(...args: Parameters<SqlReplyRecords['noteSend']>): Promise<void> {
    return this.records.noteSend(...args);
  }

  /** See {@link SqlReplyRecords.claimUnsent}. */
  claimUnsent(...args: Parameters<SqlReplyRecords['claimUnsent']>): Promise<UnsentMessage[]> {
    return this.records.claimUnsent(...args);
  }

  /** See {@link SqlReplyRecords.replies}. */
  replies(eventId: string, pluginId: string): Promise<RecordedReply[]> {
    return this.records.replies(eventId, pluginId);
  }

  /** Sends a control request (restart, settings) to the replica holding `pluginId`'s lease. */
  async control(pluginId: string, to: string, action: ControlAction, answerTo?: { id: string; from: string }): Promise<void> {
    await this.db.query('SELECT pg_notify($1, $2)', [QUEUE_CHANNEL, addressed(to, { k: 'control', p: pluginId, to, action, ...answerTo })]);
  }

  /** Answers a control request (a small JSON value: notifications carry at most 8000 bytes). */
  async answer(pluginId: string, to: string, id: string, answer: ControlAnswer): Promise<void> {
    await this.db.query('SELECT pg_notify($1, $2)', [QUEUE_CHANNEL, addressed(to, { k: 'answer', p: pluginId, to, id, answer })]);
  }

  /** Forgets final rows beyond the newest `keep` (and their replies): the queue stays bounded. */
  async prune(keep: number): Promise<number> {
    const rows = await this.db.query<{ event_id: string }>(
      `DELETE FROM host_event_queue WHERE state = 'done' AND seq < (SELECT coalesce(max(seq), 0) - $1 FROM host_event_queue) RETURNING event_id`,
      [keep],
    );
    // The replies of the rows pruned; and those of HTTP plugins (no queue row), once reply windows are long closed.
    await this.db.query("DELETE FROM host_event_sends s WHERE s.event_id = ANY($1::text[]) OR s.at < now() - interval '2 hours'", [
      rows.map((r) => r.event_id),
    ]);
    await this.db.query(
      `DELETE FROM host_event_replies r WHERE r.event_id = ANY($1::text[])
          OR (r.at < now() - interval '2 hours'
              AND NOT EXISTS (SELECT 1 FROM host_event_queue q WHERE q.event_id = r.event_id AND q.plugin_id = r.plugin_id))`,
      [rows.map((r) => r.event_id)],
    );
    return rows.length;
  }

  /**
   * Calls `onNotice` for the notifications of the queue; `onReconnect` after notifications may have been lost.
   * `hears`: the replicas whose addressed notifications to take (by default all); one addressed to another
   * replica is skipped from its first characters, unparsed. Those for every replica are always taken.
   */
  watch(onNotice: (n: QueueNotice) => void, onReconnect: () => void, hears?: (replica: string) => boolean): Promise<() => Promise<void>> {
    return this.db.listen(
      QUEUE_CHANNEL,
      (payload) => {
        const n = readNotice(payload, hears);
        if (n) onNotice(n);
      },
      onReconnect,
    );
  }
}
