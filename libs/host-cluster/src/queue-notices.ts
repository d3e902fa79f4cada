import type { CompletionOutcome, DeliveryOutcome, OutboundRecord, RuntimeStatus, SettingsDelivery } from '@host/host-core';

/** The channel the delivery queue announces itself on (rows to claim, outcomes recorded, control requests). */
export const QUEUE_CHANNEL = 'host_queue';

/** What one replica asks of the replica holding a plugin's lease. */
export type ControlAction = 'stop' | 'restart' | 'settings';

/** What the holder answers a control request with: the plugin's status (stop, restart) or what became of its settings. */
export type ControlAnswer = RuntimeStatus | SettingsDelivery | null;

/** Notifications of the queue channel. */
export type QueueNotice =
  | { k: 'new'; p: string }
  | {
      k: 'decided' | 'done';
      e: string;
      p: string;
      o: string;
      /** The decision recorded (when it fits the notification): the origin needs not read the row. */
      d?: DeliveryOutcome;
      /** 'done': the completion recorded. */
      c?: CompletionOutcome;
      /** 'done': the outbound records of the plugin's replies to the event, when the holder knows them all and they fit. */
      r?: (OutboundRecord | null)[];
    }
  | { k: 'lease'; p: string }
  | { k: 'control'; p: string; to: string; action: ControlAction; id?: string; from?: string }
  /** The answer to a control request that asked for one (`id`). */
  | { k: 'answer'; p: string; to: string; id: string; answer: ControlAnswer };

/** Notifications stay below PostgreSQL's limit (8000 bytes); a larger one is sent without its optional parts. */
export const NOTICE_LIMIT = 7_900;

/**
 * The start of a notification meant for one replica: a JSON object whose first member `"@"` names it. Every
 * replica listens on the one channel; a replica reads this much of a notification and skips one addressed to
 * another without parsing the rest. The rest is the notification as it always was, so a replica of an older
 * version (which parses every notification) still understands it; one without `"@"` is for every replica.
 */
const ADDRESSED = '{"@":';

/** The opening of a notification addressed to `replica`: its members follow, after a comma. */
export function addressTo(replica: string): string {
  return `${ADDRESSED}${JSON.stringify(replica)},`;
}

/** A notification's text for every replica. */
export function broadcast(n: QueueNotice): string {
  return JSON.stringify(n);
}

/** A notification's text for `replica` only: with `extra` when it still fits in one notification, else without. */
export function addressed(replica: string, base: QueueNotice, extra: Record<string, unknown> = {}): string {
  const head = addressTo(replica);
  const full = head + JSON.stringify({ ...base, ...extra }).slice(1);
  return Buffer.byteLength(full) < NOTICE_LIMIT ? full : head + JSON.stringify(base).slice(1);
}

/**
 * The replica a notification is addressed to, read from its first characters only; undefined for one meant for
 * every replica (or written by a version that did not address them).
 */
export function recipientOf(payload: string): string | undefined {
  if (!payload.startsWith(ADDRESSED) || payload[ADDRESSED.length] !== '"') return undefined;
  let escaped = false;
  for (let i = ADDRESSED.length + 1; i < payload.length; i++) {
    if (payload[i] === '\\') {
      escaped = true;
      i++;
    } else if (payload[i] === '"') {
      const token = payload.slice(ADDRESSED.length, i + 1);
      return escaped ? (JSON.parse(token) as string) : token.slice(1, -1);
    }
  }
  return undefined;
}

/**
 * The notification `payload` carries, or undefined when it is not one of the queue's, or when it is addressed
 * to a replica `hears` does not take (then it is not parsed at all).
 */
export function readNotice(payload: string, hears: (replica: string) => boolean = () => true): QueueNotice | undefined {
  const to = recipientOf(payload);
  if (to !== undefined && !hears(to)) return undefined;
  try {
    const parsed = JSON.parse(payload) as (QueueNotice & { '@'?: string }) | null;
    if (!parsed || typeof parsed.k !== 'string' || typeof parsed.p !== 'string') return undefined;
    if (to === undefined) return parsed;
    const { '@': _to, ...n } = parsed;
    return n as QueueNotice;
  } catch {
    // Not one of ours.
    return undefined;
  }
}
