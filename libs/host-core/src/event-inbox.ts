import type { MessageEvent } from '@host/protocol';

/**
 * Events the host accepted and has not yet logged final: an event is added
 * before its sender is told it was taken, and leaves once its event-log record,
 * every delivery final, is written (the store does both, so neither is lost
 * between them). A host that starts again routes the events its predecessor
 * left here, so an accepted event is never dropped by a crash.
 */
export interface EventInbox {
  /** Adds an accepted event; resolves once it is durable (rejects when the store cannot write it). */
  add(event: MessageEvent): Promise<void>;
  /** The events this host accepted that were not logged final, oldest first. */
  unsettled(): Promise<MessageEvent[]>;
}
