import type { OutboundRecord, OutboundRequest } from '@host/host-core';
import { Batcher, type SqlDatabase } from '@host/host-store';
import type { SendResult } from '@host/protocol';
import { leaseFence } from './sql-leases';

/** A recorded reply: its place among the plugin's replies to the event, the provider's sequence number, and what became of it. */
export interface RecordedReply {
  n: number;
  sequence: number;
  /** What the host's sink recorded of it once it was sent (or refused). */
  outbound: OutboundRecord | null;
  /** Whether it was marked sent (the provider answered, or refused it). */
  sent: boolean;
}

/** What the provider answered a recorded send, or the error it was refused with. */
export type SendAnswer = SendResult | { error: { code: string; message: string } };

/** A recorded send of a plugin while it handled an event: its place, the digest of its target and message, the provider's answer. */
export interface RecordedSend {
  n: number;
  digest: string;
  result: SendAnswer | null;
  sent: boolean;
}

/** A reply or send as it was recorded before it went out, so another process can send it. */
export interface RecordedRequest {
  message: OutboundRequest['message'];
  target?: OutboundRequest['target'] | null;
  /** The event a send named (its event's bot sends it by default). */
  eventId?: string;
}

/** A recorded reply or send that was never marked sent, claimed by this process to send it. */
export interface UnsentMessage {
  n: number;
  /** The reply's provider sequence number (null for a send). */
  sequence: number | null;
  request: RecordedRequest;
}

/** What a fenced recording answers for an item whose plugin's lease this replica no longer holds. */
const LOST = Symbol('lease lost');

/** Rounds of numbering a reply that met another process's reply to the same event before giving up (each round re-reads the highest number). */
const RECORD_REPLY_ATTEMPTS = 10;

/** A reply or send the process tried to record after its plugin's lease moved to another replica: it is not sent. */
export class LeaseLostError extends Error {
  constructor(pluginId: string) {
    super(`The lease of ${pluginId} moved to another replica, which delivers its events now; this process sends nothing more for it.`);
    this.name = 'LeaseLostError';
  }
}

/**
 * Replies and sends recorded before they go out (`host_event_replies`,
 * `host_event_sends`), keyed by (event, plugin, n): a delivery repeated after
 * a crash or a takeover finds what the handling before it sent, and a
 * message recorded but never marked sent is sent once, by the process that
 * claims it. The statements that record are fenced by the plugin's lease
 * epoch ({@link leaseFence}).
 *
 * What the outbox gives it (requests, outbound records, the provider's
 * answers) is stored as JSON as given; what it reads back is typed here, once.
 */
export class SqlReplyRecords {
  /**
   * @param replica this host's name (the lease holder the fence checks).
   * @param claimer names this process in the messages it records or claims ({@link SqlDeliveryQueue.claimer}).
   */
  constructor(
    private readonly db: SqlDatabase,
    readonly replica: string,
    readonly claimer: string,
  ) {}

  /**
   * Records the `n`-th reply of `pluginId` to `eventId` before it is sent,
   * with the provider sequence number it gets (the next free one of the event,
   * whichever replica answers) and the request (so another replica can send it
   * if this one dies first). Answers the recorded reply when the `n`-th reply
   * was recorded before (a delivery again after a takeover): then it is not
   * sent again, unless it was never marked sent and this replica claims it
   * ({@link claimUnsent}).
   */
  async recordReply(
    eventId: string,
    pluginId: string,
    n: number,
    request: unknown = null,
    epoch?: number,
  ): Promise<{ fresh: boolean; reply: RecordedReply }> {
    const got = await this.recordings.push({ e: eventId, p: pluginId, n, req: request, ep: epoch ?? null });
    if (got === LOST) throw new LeaseLostError(pluginId);
    return got;
  }

  /**
   * Replies recorded together: one statement answers those recorded before and
   * records the others, numbered after the highest sequence number of their
   * event (in call order within it). A reply whose number another process took
   * at the same moment (or that it recorded itself) is skipped by the statement
   * (ON CONFLICT DO NOTHING, so PostgreSQL logs no error) and asked again with
   * the next free number, or answered as recorded before.
   */
  private readonly recordings = new Batcher<
    { e: string; p: string; n: number; req: unknown; ep: number | null },
    { fresh: boolean; reply: RecordedReply } | typeof LOST
  >(
    async (items) => {
      const out: ({ fresh: boolean; reply: RecordedReply } | typeof LOST)[] = new Array(items.length);
      let todo = items.map((item, i) => ({ item, i }));
      for (let attempt = 0; todo.length > 0; attempt++) {
        if (attempt >= RECORD_REPLY_ATTEMPTS)
          throw new Error(
            `Could not number a reply to event ${todo[0]!.item.e}: ${RECORD_REPLY_ATTEMPTS} tries each met another process's reply.`,
          );
        const got = await this.recordBatch(todo.map((t) => t.item));
        const left: typeof todo = [];
        todo.forEach((t, j) => {
          const r = got[j];
          if (r) out[t.i] = r;
          else left.push(t);
        });
        todo = left;
      }
      return out;
    },
    () => Batcher.parallelOn(this.db),
  );

  /** Answers each item recorded before or recorded now; undefined where another process got in first. */
  private async recordBatch(
    items: { e: string; p: string; n: number; req: unknown; ep: number | null }[],
  ): Promise<({ fresh: boolean; reply: RecordedReply } | typeof LOST | undefined)[]> {
    const rows = await this.db.query<{
      i: number;
      fresh: boolean;
      n: number;
      sequence: number;
      outbound: OutboundRecord | null;
      sent: boolean;
      lost: boolean;
    }>(
      `WITH x AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(i integer, e text, p text, n integer, req jsonb, ep bigint)),
       known AS (
         SELECT x.i, r.n, r.sequence, r.outbound, r.sent_at IS NOT NULL AS sent
           FROM x JOIN host_event_replies r ON r.event_id = x.e AND r.plugin_id = x.p AND r.n = x.n),
       fenced AS (
         SELECT x.i FROM x WHERE NOT EXISTS (SELECT 1 FROM known WHERE known.i = x.i) AND NOT ${leaseFence('x.p', 'x.ep', '$3')}),
       fresh AS (
         SELECT x.*, row_number() OVER (PARTITION BY x.e ORDER BY x.i) AS k FROM x
          WHERE NOT EXISTS (SELECT 1 FROM known WHERE known.i = x.i) AND NOT EXISTS (SELECT 1 FROM fenced WHERE fenced.i = x.i)),
       top AS (
         SELECT d.e, coalesce((SELECT max(r.sequence) FROM host_event_replies r WHERE r.event_id = d.e), 0) AS top
           FROM (SELECT DISTINCT e FROM fresh) d),
       made AS (
         INSERT INTO host_event_replies (event_id, plugin_id, n, sequence, request, claimed_by)
           SELECT f.e, f.p, f.n, t.top + f.k, f.req, $2 FROM fresh f JOIN top t ON t.e = f.e ORDER BY f.i
         ON CONFLICT DO NOTHING
         RETURNING event_id, plugin_id, n, sequence)
       SELECT known.i, false AS fresh, known.n, known.sequence, known.outbound, known.sent, false AS lost FROM known
       UNION ALL
       SELECT x.i, true, m.n, m.sequence, NULL::jsonb, false, false FROM made m JOIN x ON x.e = m.event_id AND x.p = m.plugin_id AND x.n = m.n
       UNION ALL
       SELECT fenced.i, false, 0, 0, NULL::jsonb, false, true FROM fenced`,
      [JSON.stringify(items.map((item, i) => ({ i, ...item }))), this.claimer, this.replica],
    );
    const byIndex = new Map<number, { fresh: boolean; reply: RecordedReply } | typeof LOST>(
      rows.map(({ i, fresh, lost, ...reply }) => [i, lost ? LOST : { fresh, reply }]),
    );
    return items.map((_, i) => byIndex.get(i));
  }

  /** What became of a recorded reply (the outbound record the host shows); marks it sent. */
  async noteReply(eventId: string, pluginId: string, n: number, outbound: unknown): Promise<void> {
    await this.notes.push({ e: eventId, p: pluginId, n, o: outbound });
  }

  /** Replies marked sent together, in one statement. */
  private readonly notes = new Batcher<{ e: string; p: string; n: number; o: unknown }, void>(
    async (items) => {
      await this.db.query(
        `UPDATE host_event_replies r SET outbound = x.o, sent_at = now()
         FROM jsonb_to_recordset($1::jsonb) AS x(e text, p text, n integer, o jsonb)
        WHERE r.event_id = x.e AND r.plugin_id = x.p AND r.n = x.n`,
        [JSON.stringify(items)],
      );
      return items.map(() => undefined);
    },
    () => Batcher.parallelOn(this.db),
  );

  /**
   * Records the `n`-th send (messages.send) of `pluginId` while it handles
   * `eventId`, before it is sent. Answers the earlier record when there is one
   * (the plugin handles the event again after a takeover): its digest says
   * whether it is the same message, `result` what the provider answered.
   */
  async recordSend(
    eventId: string,
    pluginId: string,
    n: number,
    digest: string,
    request: unknown,
    epoch?: number,
  ): Promise<{ fresh: boolean; send: RecordedSend }> {
    const made = await this.db.query(
      `INSERT INTO host_event_sends (event_id, plugin_id, n, digest, request, claimed_by)
         SELECT $1, $2, $3, $4, $5, $6 WHERE ${leaseFence('$2', '$7', '$8')}
       ON CONFLICT (event_id, plugin_id, n) DO NOTHING RETURNING n`,
      [eventId, pluginId, n, digest, JSON.stringify(request), this.claimer, epoch ?? null, this.replica],
    );
    if (made.length) return { fresh: true, send: { n, digest, result: null, sent: false } };
    const known = await this.db.query<RecordedSend>(
      'SELECT n, digest, result, sent_at IS NOT NULL AS sent FROM host_event_sends WHERE event_id = $1 AND plugin_id = $2 AND n = $3',
      [eventId, pluginId, n],
    );
    if (!known[0]) throw new LeaseLostError(pluginId);
    return { fresh: false, send: known[0] };
  }

  /** What the provider answered a recorded send (or its refusal), and the outbound record; marks it sent. */
  async noteSend(eventId: string, pluginId: string, n: number, result: unknown, outbound: unknown): Promise<void> {
    await this.db.query(
      'UPDATE host_event_sends SET result = $4, outbound = $5, sent_at = now() WHERE event_id = $1 AND plugin_id = $2 AND n = $3',
      [eventId, pluginId, n, JSON.stringify(result), JSON.stringify(outbound)],
    );
  }

  /**
   * Claims recorded replies or sends of (`eventId`, `pluginId`) that were
   * never marked sent and that another process recorded (a replica that died
   * between recording and sending), for this process to send: only while this
   * process has the event's queue row claimed (it took the plugin over), and
   * each row by one process only (the update is conditional on the claimer it
   * read). `n`: only that one.
   */
  async claimUnsent(kind: 'reply' | 'send', eventId: string, pluginId: string, n?: number): Promise<UnsentMessage[]> {
    const table = kind === 'reply' ? 'host_event_replies' : 'host_event_sends';
    const sequence = kind === 'reply' ? 'r.sequence' : 'NULL::integer';
    return this.db.query<UnsentMessage>(
      `UPDATE ${table} r SET claimed_by = $3
        WHERE r.event_id = $1 AND r.plugin_id = $2 AND ($4::integer IS NULL OR r.n = $4) AND r.sent_at IS NULL
          AND r.claimed_by IS DISTINCT FROM $3 AND r.request IS NOT NULL
          AND EXISTS (SELECT 1 FROM host_event_queue q WHERE q.event_id = r.event_id AND q.plugin_id = r.plugin_id AND q.claimed_by = $3)
        RETURNING r.n, ${sequence} AS sequence, r.request`,
      [eventId, pluginId, this.claimer, n ?? null],
    );
  }

  /** The recorded replies of `pluginId` to `eventId`, in order. */
  async replies(eventId: string, pluginId: string): Promise<RecordedReply[]> {
    return this.db.query<RecordedReply>(
      'SELECT n, sequence, outbound, sent_at IS NOT NULL AS sent FROM host_event_replies WHERE event_id = $1 AND plugin_id = $2 ORDER BY n',
      [eventId, pluginId],
    );
  }
}
