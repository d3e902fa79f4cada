import type { MessageEvent, Target } from '@host/protocol';

/** What a reply to one event needs, kept while the provider accepts replies to it. */
export interface ReplyReference {
  eventId: string;
  /** The provider the event came from, which the reply goes through. */
  source: string;
  /** The bot account of that provider that received the event. */
  botAccountId: string;
  target: Target;
  /** The provider's id of the message being answered. */
  messageId: string;
  /** The end of the provider's reply window (epoch ms); undefined when the event named none. */
  replyUntil: number | undefined;
  /** The same instant as the event gave it, for messages. */
  replyUntilText: string | undefined;
  /** Replies made so far; the next one gets `sequence + 1`. */
  sequence: number;
  /** Plugins the event was handed to: only they may answer it. */
  readonly plugins: string[];
}

export interface ReplyReferencesOptions {
  /** References kept at most (default 100,000). */
  maxEntries?: number;
  /** Estimated bytes of the references kept at most (default 32 MiB). */
  maxBytes?: number;
  /** How long a reference to an event that names no reply window is kept (default 5 minutes). */
  windowWithoutDeadlineMilliseconds?: number;
  /**
   * How long a reference is kept after its window closed, so a late reply is
   * told `message.reference.expired` rather than `unknown` (default 1 minute).
   */
  expiredGraceMilliseconds?: number;
  now?: () => number;
}

/** What a reply finds. */
export type ReplyLookup =
  { status: 'open'; reference: ReplyReference } | { status: 'expired'; reference: ReplyReference } | { status: 'unknown' };

interface Entry {
  reference: ReplyReference;
  /** After this instant the entry is dropped. */
  keepUntil: number;
  bytes: number;
  /** Replaced by a newer entry of the same event id; skipped when it reaches the head. */
  dead: boolean;
}

/** Rough heap cost of an entry beyond its strings: objects, the map slot, the queue slot. */
const ENTRY_OVERHEAD_BYTES = 320;
const stringBytes = (s: string) => 2 * s.length + 16;

/**
 * References to the events plugins may answer, by event id, each with the
 * plugins the event was handed to. Independent of the event log, which keeps
 * only the newest events for display: a reply is accepted while the
 * provider's reply window (`messageReference.replyUntil`) is open, however
 * many events came since.
 *
 * Bounded by memory. References are dropped, oldest first (the order events
 * were first handed to a plugin):
 * - once their window closed more than `expiredGraceMilliseconds` ago
 *   (until then a reply gets `message.reference.expired`);
 * - when keeping one more would exceed `maxEntries` or `maxBytes`, even if
 *   the window is still open (the reply then gets `message.reference.unknown`;
 *   `evictedOpen` counts these).
 * Dropping works from the oldest end, so a reference with a long window there
 * holds back the dropping of expired ones behind it; the caps bound them anyway.
 */
export class ReplyReferences {
  private readonly byEvent = new Map<string, Entry>();
  /** Entries in the order they were created, oldest from `head` (see EventLog's note on Map iteration). */
  private queue: (Entry | undefined)[] = [];
  private head = 0;
  private totalBytes = 0;
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private readonly noDeadlineMs: number;
  private readonly graceMs: number;
  private readonly now: () => number;
  /** References dropped while their window was still open, to stay within the caps. */
  evictedOpen = 0;

  constructor(options: ReplyReferencesOptions = {}) {
    this.maxEntries = Math.max(1, options.maxEntries ?? 100_000);
    this.maxBytes = Math.max(1, options.maxBytes ?? 32 * 1024 * 1024);
    this.noDeadlineMs = options.windowWithoutDeadlineMilliseconds ?? 5 * 60_000;
    this.graceMs = options.expiredGraceMilliseconds ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /** References kept. */
  get size(): number {
    return this.byEvent.size;
  }

  /** Estimated bytes of the references kept. */
  get bytes(): number {
    return this.totalBytes;
  }

  /** Lets `pluginId` answer `event`: called when the event is handed to it. */
  allow(event: MessageEvent, pluginId: string): void {
    const now = this.now();
    const kept = this.byEvent.get(event.eventId);
    if (kept && kept.keepUntil >= now && kept.reference.source === event.source) {
      if (!kept.reference.plugins.includes(pluginId)) {
        kept.reference.plugins.push(pluginId);
        kept.bytes += stringBytes(pluginId);
        this.totalBytes += stringBytes(pluginId);
      }
      return;
    }
    if (kept) this.remove(kept);
    const ref = event.messageReference;
    const parsed = ref.replyUntil === undefined ? NaN : Date.parse(ref.replyUntil);
    const replyUntil = Number.isNaN(parsed) ? undefined : parsed;
    const reference: ReplyReference = {
      eventId: event.eventId,
      source: event.source,
      botAccountId: event.bot.botAccountId,
      target: { type: ref.targetType, id: ref.targetId },
      messageId: ref.messageId,
      replyUntil,
      replyUntilText: replyUntil === undefined ? undefined : ref.replyUntil,
      sequence: 0,
      plugins: [pluginId],
    };
    const bytes =
      ENTRY_OVERHEAD_BYTES +
      stringBytes(event.eventId) +
      stringBytes(event.bot.botAccountId) +
      stringBytes(ref.targetId) +
      stringBytes(ref.messageId) +
      stringBytes(pluginId) +
      (reference.replyUntilText === undefined ? 0 : stringBytes(reference.replyUntilText));
    const entry: Entry = { reference, keepUntil: (replyUntil ?? now + this.noDeadlineMs) + this.graceMs, bytes, dead: false };
    this.dropExpired(now);
    while (this.byEvent.size > 0 && (this.byEvent.size + 1 > this.maxEntries || this.totalBytes + bytes > this.maxBytes)) {
      const oldest = this.shift()!;
      if (oldest.keepUntil - this.graceMs >= now) this.evictedOpen++;
    }
    this.byEvent.set(event.eventId, entry);
    this.queue.push(entry);
    this.totalBytes += bytes;
  }

  /** What a reply of `pluginId` to `eventId` finds. */
  find(pluginId: string, eventId: string): ReplyLookup {
    const entry = this.byEvent.get(eventId);
    const now = this.now();
    if (!entry || entry.keepUntil < now || !entry.reference.plugins.includes(pluginId)) return { status: 'unknown' };
    const { replyUntil } = entry.reference;
    return replyUntil !== undefined && now > replyUntil
      ? { status: 'expired', reference: entry.reference }
      : { status: 'open', reference: entry.reference };
  }

  private dropExpired(now: number): void {
    for (let e = this.peek(); e && e.keepUntil < now; e = this.peek()) this.shift();
  }

  /** The oldest live entry, skipping dead ones. */
  private peek(): Entry | undefined {
    while (this.head < this.queue.length && this.queue[this.head]!.dead) this.advance();
    return this.queue[this.head];
  }

  /** Removes and returns the oldest live entry. */
  private shift(): Entry | undefined {
    const e = this.peek();
    if (e) {
      this.remove(e);
      this.advance();
    }
    return e;
  }

  private remove(e: Entry): void {
    e.dead = true;
    this.byEvent.delete(e.reference.eventId);
    this.totalBytes -= e.bytes;
  }

  private advance(): void {
    // Let the entry go now rather than when the queue is next compacted.
    this.queue[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
