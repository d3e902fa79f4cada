import type { CommandMatch, MessageEvent, Target } from '@host/protocol';
import type { DeliveryStateView } from '@host/protocol';
import type { Transport } from './records';

/** Where one delivery stands: the admin API's DELIVERY_STATES, where each is described. */
export type DeliveryState = DeliveryStateView;

/** How the work on an accepted event ended. */
export interface CompletionRecord {
  at: string;
  /** null when the handler succeeded; its own error, or `delivery.deadline` / `delivery.interrupted`. */
  error: { code: string; message: string } | null;
  /** How long the handler ran as the plugin reported it; else from hand-over to the end. */
  durationMs: number | null;
}

/** One plugin's part in one event. `done` turns true when the decision (or its failure) is in. */
export interface DeliveryRecord {
  pluginId: string;
  transport: Transport;
  command?: CommandMatch;
  startedAt: string;
  state: DeliveryState;
  /** True once the event left the queue for the plugin; a refused or dropped event never was. */
  sent: boolean;
  done: boolean;
  accepted: boolean;
  intercepted: boolean;
  /** Why there is no decision (a `delivery.*` or `http.*` code), or the error of a decline. */
  error: { code: string; message: string } | null;
  /** Something the host ignored in the decision (an undeclared interception). */
  notice?: { code: string; message: string };
  /** From hand-over to the queue until the decision, queue wait included. */
  durationMs: number | null;
  /** The end of the work of an accepted delivery; null before it and for deliveries never accepted. */
  completion: CompletionRecord | null;
}

/** A message a plugin sent, or tried to send, with the provider body it became. */
export interface OutboundRecord {
  pluginId: string;
  kind: 'reply' | 'send';
  eventId?: string;
  target: Target;
  /** Exactly what the provider received (for QQ Bot: msg_type, content or markdown, msg_id, msg_seq). */
  body: unknown;
  messageId?: string;
  at: string;
  error: { code: string; message: string } | null;
}

/** One event as the event log keeps it: who got it, their decisions and timings, what plugins sent. */
export interface EventRecord {
  eventId: string;
  source: string;
  receivedAt: string;
  /** When every recipient had decided or failed: routing is over. */
  routedAt: string | null;
  /** When every delivery had reached a final state (handlers ended, deadlines passed). */
  completedAt: string | null;
  event: MessageEvent;
  /** The chosen plugins in delivery order. */
  recipients: string[];
  deliveries: DeliveryRecord[];
  outbound: OutboundRecord[];
  /** The plugin whose `intercepted: true` stopped delivery, if any. */
  interceptedBy: string | null;
  /** Replies made to this event so far; each gets the next number (QQ Bot: msg_seq). */
  replySequence: number;
}

/** Events an event log keeps unless configured otherwise. */
export const DEFAULT_EVENT_LOG_CAPACITY = 1000;

/** Which records `EventLogStore.list` answers. */
export interface EventLogQuery {
  /** At most this many records (default 100). */
  limit?: number;
  /** Only events this plugin was chosen for. */
  pluginId?: string;
}

/**
 * The event log's records: the most recent events, bounded by `capacity`.
 *
 * The window of recent events is small enough to hold in memory, and the
 * dispatcher reads and changes it on every event, so reads are synchronous
 * and a store keeps the very objects it is given: `get` and `list` answer
 * the record `append` received, which the dispatcher goes on changing
 * (deliveries, outbound messages, `routedAt`, `completedAt`), telling the
 * store with `update`. A store that persists writes changes behind the
 * dispatcher's back (`flush` waits for them) and, when it loads records a
 * stopped host left, marks deliveries that were not final as `interrupted`
 * (see `interruptDeliveries`). `describeEventLogStoreContract` in
 * `@host/host-store/testing` checks an implementation.
 */
export interface EventLogStore {
  /** Events kept; appending one more forgets the oldest. */
  readonly capacity: number;
  /**
   * Keeps `record` as the newest event. A record with the same `eventId`
   * is replaced, and the new one takes the newest place.
   */
  append(record: EventRecord): void;
  /** The kept `record` changed; a record no longer kept (or never appended) is ignored. */
  update(record: EventRecord): void;
  get(eventId: string): EventRecord | undefined;
  /** Newest first. */
  list(query?: EventLogQuery): EventRecord[];
  /** Resolves once every append and update so far is stored. */
  flush(): Promise<void>;
  /**
   * Flushes and closes. The records stay readable, and later appends and
   * updates still change what `get` and `list` answer, but are not stored.
   */
  close(): Promise<void>;
}

const FINAL: ReadonlySet<DeliveryState> = new Set(['declined', 'completed', 'failed', 'expired', 'interrupted']);

/** Whether a delivery can still change (a decision or a completion may come). */
export function isDeliveryPending(d: DeliveryRecord): boolean {
  return !FINAL.has(d.state);
}

/**
 * Ends the deliveries of a record that a stopped host left unfinished: each
 * becomes `interrupted` with `delivery.interrupted` as its error (as the
 * decision when none came, else as the completion), and the event gets
 * `routedAt` and `completedAt` if it had none. Returns whether anything
 * changed. For stores that load records of an earlier run.
 */
export function interruptDeliveries(record: EventRecord, at: string): boolean {
  const error = { code: 'delivery.interrupted', message: 'The host stopped before this delivery ended; nothing more is known about it.' };
  let changed = false;
  for (const d of record.deliveries) {
    if (!isDeliveryPending(d)) continue;
    changed = true;
    if (d.done && d.accepted) {
      d.completion ??= { at, error, durationMs: null };
    } else if (!d.done) {
      d.done = true;
      d.error = error;
    }
    d.state = 'interrupted';
  }
  if (record.routedAt === null || record.completedAt === null) {
    changed = true;
    record.routedAt ??= at;
    record.completedAt ??= at;
  }
  return changed;
}
