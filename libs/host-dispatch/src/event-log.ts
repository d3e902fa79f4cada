import { EventEmitter } from 'node:events';
import type { Transport } from '@host/host-core';
import type { CommandMatch, MessageEvent, Target } from '@host/protocol';

/**
 * Where one delivery stands (docs/protocol/v2.md 6.6): `queued` in the
 * plugin's queue, `sent` awaiting the decision, `running` accepted and
 * awaiting completion, then one of the final states.
 */
export type DeliveryState = 'queued' | 'sent' | 'running' | 'declined' | 'completed' | 'failed';

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

export type EventLogUpdate =
  | { type: 'event' | 'delivery' | 'outbound' | 'routed' | 'completed'; record: EventRecord }
  | { type: 'send'; outbound: OutboundRecord };

export interface EventLogOptions {
  /** Events kept; older ones are forgotten (and can no longer be replied to). */
  capacity?: number;
}

/**
 * The bounded in-memory record of recent events: who got each one, their
 * ACKs and timings, errors and outbound messages. Updates are emitted as
 * 'update' and can be consumed as an async iterator for streaming.
 */
export class EventLog {
  private readonly records = new Map<string, EventRecord>();
  /**
   * Records in the order they were added, oldest from `head`: finding the
   * oldest through the Map's iterator walks over every deleted entry the
   * Map keeps until it rehashes, which under load cost more than the rest of add().
   */
  private order: EventRecord[] = [];
  private head = 0;
  private readonly emitter = new EventEmitter();
  readonly capacity: number;

  constructor(options: EventLogOptions = {}) {
    this.capacity = Math.max(1, options.capacity ?? 1000);
    // Each SSE client adds a listener; the default warning at 10 is noise here.
    this.emitter.setMaxListeners(0);
  }

  add(record: EventRecord): void {
    if (this.records.delete(record.eventId)) {
      // Rare (event ids are unique per source): the same id again takes the newest place.
      this.order = this.order.slice(this.head).filter((r) => r.eventId !== record.eventId);
      this.head = 0;
    }
    this.records.set(record.eventId, record);
    this.order.push(record);
    if (this.records.size > this.capacity) this.records.delete(this.order[this.head++]!.eventId);
    if (this.head >= this.capacity) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
    this.publish({ type: 'event', record });
  }

  get(eventId: string): EventRecord | undefined {
    return this.records.get(eventId);
  }

  /** Newest first; optionally only events a plugin took part in. */
  list(options: { limit?: number; pluginId?: string } = {}): EventRecord[] {
    const limit = options.limit ?? 100;
    const out: EventRecord[] = [];
    const all = [...this.records.values()];
    for (let i = all.length - 1; i >= 0 && out.length < limit; i--) {
      const r = all[i]!;
      if (!options.pluginId || r.recipients.includes(options.pluginId)) out.push(r);
    }
    return out;
  }

  publish(update: EventLogUpdate): void {
    if (this.emitter.listenerCount('update') > 0) this.emitter.emit('update', update);
  }

  /** Calls `listener` for every update; returns the unsubscribe function. */
  subscribe(listener: (update: EventLogUpdate) => void): () => void {
    this.emitter.on('update', listener);
    return () => this.emitter.off('update', listener);
  }

  /**
   * Updates as an async iterator, until `signal` aborts. A consumer that falls
   * more than `buffer` updates behind loses the oldest ones.
   */
  async *stream(options: { signal?: AbortSignal; buffer?: number } = {}): AsyncGenerator<EventLogUpdate> {
    const max = options.buffer ?? 1000;
    const queue: EventLogUpdate[] = [];
    let wake: (() => void) | null = null;
    const unsubscribe = this.subscribe((u) => {
      queue.push(u);
      if (queue.length > max) queue.shift();
      wake?.();
    });
    const onAbort = () => wake?.();
    options.signal?.addEventListener('abort', onAbort);
    try {
      while (!options.signal?.aborted) {
        const next = queue.shift();
        if (next) {
          yield next;
          continue;
        }
        await new Promise<void>((r) => (wake = r));
        wake = null;
      }
    } finally {
      unsubscribe();
      options.signal?.removeEventListener('abort', onAbort);
    }
  }
}
