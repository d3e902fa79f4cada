import { MemoryReplayStore, type ReplayStore } from '@host/host-core';
import { createHash } from 'node:crypto';

export interface ReplayGuardOptions {
  /**
   * Where taken requests are remembered: the host's store (a file or the SQL
   * database), so a replay is refused after a restart and, on a shared
   * PostgreSQL server, by every replica. Default: memory only.
   */
  store?: ReplayStore;
  /**
   * How long a request is remembered (default 65 minutes: the longest reply window, C2C's 60 minutes, and
   * the 5-minute timestamp tolerance), so a message the platform pushes again under a new event id is
   * recognised by its d.id for as long as a plugin could still answer it.
   */
  rememberMilliseconds?: number;
  /** Keys remembered at most by the default memory store (default 50,000). */
  maxEntries?: number;
  now?: () => number;
}

/** The C2C reply window (60 minutes, send.md of tencent-connect/bot-docs) plus the 5-minute timestamp tolerance. */
export const DEFAULT_REMEMBER_MILLISECONDS = 65 * 60_000;

/** What names one signed op 0 request: its event id, its message's id, or, with neither, its signature. */
export interface ReplayNames {
  /** The top-level `id`. */
  eventId: string | null;
  /** `d.id` of a message event: the same message pushed again under another event id (or none) is the same message. */
  messageId: string | null;
  /** X-Signature-Ed25519: Ed25519 signatures are deterministic, so without ids the signature names the request. */
  signature: string;
}

/** A key as it is kept: printable and short, else its SHA-256 (an id is the platform's, but only its signature vouches for it). */
function keyOf(kind: string, value: string): string {
  return /^[\x21-\x7e]{1,200}$/.test(value) ? `${kind}:${value}` : `${kind}-sha256:${createHash('sha256').update(value).digest('hex')}`;
}

/** The keys of a request's names: every id it has, or its signature when it has none. */
export function replayKeys(n: ReplayNames): string[] {
  const keys: string[] = [];
  if (n.eventId) keys.push(keyOf('event', n.eventId));
  if (n.messageId) keys.push(keyOf('message', n.messageId));
  if (keys.length === 0) keys.push(keyOf('signature', n.signature.toLowerCase()));
  return keys;
}

/**
 * One bot account's memory of the requests its webhook took, bounded in time.
 * A request whose signature is valid but one of whose keys was taken is a
 * replay (or the platform sending again what it already delivered): refused,
 * not dispatched twice. Requests older than the timestamp tolerance are
 * refused before they get here, so remembering keys a little longer than that
 * tolerance suffices.
 */
export class ReplayGuard {
  readonly store: ReplayStore;
  private readonly rememberMs: number;
  private readonly now: () => number;

  /** `scope` keeps accounts apart in a shared store (the account's app id: event ids are the app's). */
  constructor(
    private readonly scope: string,
    o: ReplayGuardOptions = {},
  ) {
    this.store = o.store ?? new MemoryReplayStore({ maxEntries: o.maxEntries });
    this.rememberMs = o.rememberMilliseconds ?? DEFAULT_REMEMBER_MILLISECONDS;
    this.now = o.now ?? Date.now;
  }

  /** Records `keys`; false when one of them was taken already (a replay), and then records none. */
  firstTime(keys: readonly string[]): Promise<boolean> {
    const now = this.now();
    return this.store.claim(this.scope, keys, now, now + this.rememberMs);
  }

  /** Forgets `keys`: their request was not taken after all (refused at admission), so the platform's next push of it is no replay. */
  forget(keys: readonly string[]): Promise<void> {
    return this.store.forget(this.scope, keys);
  }
}
