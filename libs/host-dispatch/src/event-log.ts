import { EventEmitter } from 'node:events';
import type { EventLogQuery, EventLogStore, EventRecord, OutboundRecord } from '@host/host-core';
import { MemoryEventLogStore } from '@host/host-store';

// The records are host-wide types (stores keep them); the dispatcher's users import them from here too.
export type { CompletionRecord, DeliveryRecord, DeliveryState, EventRecord, OutboundRecord } from '@host/host-core';

/**
 * What changed in the event log. `send` is an outbound message kept on no
 * event record: a `messages.send`, or a reply to an event the log no longer keeps.
 */
export type EventLogUpdate =
  { type: 'event' | 'delivery' | 'outbound' | 'routed' | 'completed'; record: EventRecord } | { type: 'send'; outbound: OutboundRecord };

export interface EventLogOptions {
  /** Where the records are kept (default: in memory, `capacity` events). */
  store?: EventLogStore;
  /** Events kept by the default store; older ones are forgotten. */
  capacity?: number;
}

/**
 * The record of recent events: who got each one, their ACKs and timings,
 * errors and outbound messages, kept by an `EventLogStore` (bounded). Updates
 * are emitted as 'update', can be consumed as an async iterator for
 * streaming, and tell the store what changed. Replies do not depend on it:
 * the dispatcher keeps reply references apart (`ReplyReferences`).
 */
export class EventLog {
  private readonly emitter = new EventEmitter();
  readonly store: EventLogStore;

  constructor(options: EventLogOptions = {}) {
    this.store = options.store ?? new MemoryEventLogStore({ capacity: options.capacity });
    // Each SSE client adds a listener; the default warning at 10 is noise here.
    this.emitter.setMaxListeners(0);
  }

  /** Events kept; older ones are forgotten. */
  get capacity(): number {
    return this.store.capacity;
  }

  add(record: EventRecord): void {
    this.store.append(record);
    this.publish({ type: 'event', record });
  }

  get(eventId: string): EventRecord | undefined {
    return this.store.get(eventId);
  }

  /** Newest first; optionally only events a plugin took part in. */
  list(options: EventLogQuery = {}): EventRecord[] {
    return this.store.list(options);
  }

  /** Tells the store and the subscribers that a record changed (or a send happened). */
  publish(update: EventLogUpdate): void {
    if (update.type !== 'event' && update.type !== 'send') this.store.update(update.record);
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
