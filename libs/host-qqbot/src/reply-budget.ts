import { HostError } from '@host/host-core';

/** Replies one received group or C2C message may have (send.md of tencent-connect/bot-docs: "每个消息最多回复 5 次"). */
export const MAX_REPLIES_PER_MESSAGE = 5;

export interface ReplyBudgetOptions {
  maxReplies?: number;
  /** Messages remembered at most; the oldest are forgotten first (default 100,000). */
  maxMessages?: number;
  now?: () => number;
}

interface Entry {
  used: number;
  /** When the message's reply window closes: after it the platform refuses any reply, so the count can go. */
  until: number;
}

/**
 * The passive replies each received message has had, whichever plugin sent
 * them, so the sixth is refused before it reaches the platform
 * (message.reference.reply_limit). A slot is taken before the call and given
 * back when the platform did not take the reply. Memory is bounded: an entry
 * goes when its message's reply window closes, and at most `maxMessages` are kept.
 */
export class ReplyBudget {
  private readonly entries = new Map<string, Entry>();
  private readonly max: number;
  private readonly maxMessages: number;
  private readonly now: () => number;

  constructor(o: ReplyBudgetOptions = {}) {
    this.max = o.maxReplies ?? MAX_REPLIES_PER_MESSAGE;
    this.maxMessages = o.maxMessages ?? 100_000;
    this.now = o.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Takes a reply slot of `messageId` (of bot account `accountId`), or throws message.reference.reply_limit.
   * `sequence` is the reply's place among every reply to the message (its msg_seq): in a cluster the replicas
   * number the replies to one message together in the shared store, so one past the limit is refused here even
   * when the earlier replies went out through other replicas.
   */
  take(accountId: string, messageId: string, windowMilliseconds: number, sequence = 0): () => void {
    if (sequence > this.max) throw this.limitReached(messageId, sequence - 1);
    const now = this.now();
    this.prune(now);
    const key = `${accountId}\n${messageId}`;
    let entry = this.entries.get(key);
    if (!entry) {
      if (this.entries.size >= this.maxMessages) this.entries.delete(this.entries.keys().next().value as string);
      entry = { used: 0, until: now + windowMilliseconds };
      this.entries.set(key, entry);
    }
    if (entry.used >= this.max) throw this.limitReached(messageId, entry.used);
    entry.used++;
    const taken = entry;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      taken.used = Math.max(0, taken.used - 1);
    };
  }

  private limitReached(messageId: string, used: number): HostError {
    return new HostError(
      'message.reference.reply_limit',
      `message ${messageId} has had ${used} replies, the most the platform allows; this one was not sent`,
      { provider: 'qqbot', messageId, maxReplies: this.max },
    );
  }

  /** Forgets messages whose reply window closed (entries are in the order of their first reply). */
  private prune(now: number): void {
    for (const [key, entry] of this.entries) {
      if (entry.until > now) break;
      this.entries.delete(key);
    }
  }
}
