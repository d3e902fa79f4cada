/**
 * What a signed webhook remembers of the requests it took, so a captured
 * request sent again (within the signature's timestamp tolerance) is refused
 * instead of being dispatched twice. Each request is named by one or more
 * keys (its event id, the platform's message id, its signature); it is a
 * replay when any of them is remembered.
 *
 * In memory for tests; with the file store, a bounded file in the state
 * directory; with the SQL store, a table, which replicas sharing a PostgreSQL
 * server share too. Either way it outlives a restart of the host.
 */
export interface ReplayStore {
  /**
   * Remembers every one of `keys` within `scope` until `expiresMs`, unless one
   * of them is remembered already (and not expired at `nowMs`): then nothing
   * is recorded. Answers whether they were recorded (the request is new).
   * Atomic: of two claims sharing a key, on any hosts sharing the store,
   * exactly one answers true.
   */
  claim(scope: string, keys: readonly string[], nowMs: number, expiresMs: number): Promise<boolean>;
  /** Forgets `keys` of `scope`: the request was not taken after all, so the platform's next push of it is no replay. */
  forget(scope: string, keys: readonly string[]): Promise<void>;
}

export interface ReplayStoreBounds {
  /** Keys remembered at most; beyond that the oldest are forgotten first (default 50,000). */
  maxEntries?: number;
}

export const DEFAULT_MAX_REPLAY_ENTRIES = 50_000;

/**
 * Keys in memory, bounded by their expiry and by count. Insertion order is
 * expiry order as long as every claim uses the same memory time, so expired
 * keys are found at the front. The file store keeps one of these and writes
 * each change behind it.
 */
export class MemoryReplayStore implements ReplayStore {
  /** `scope \n key` -> expiry instant, in the order claimed. */
  private readonly keys = new Map<string, number>();
  private readonly maxEntries: number;
  /** Keys forgotten before their time to stay within maxEntries. */
  evicted = 0;

  constructor(bounds: ReplayStoreBounds = {}) {
    this.maxEntries = Math.max(1, bounds.maxEntries ?? DEFAULT_MAX_REPLAY_ENTRIES);
  }

  get size(): number {
    return this.keys.size;
  }

  async claim(scope: string, keys: readonly string[], nowMs: number, expiresMs: number): Promise<boolean> {
    return this.claimNow(scope, keys, nowMs, expiresMs);
  }

  async forget(scope: string, keys: readonly string[]): Promise<void> {
    this.forgetNow(scope, keys);
  }

  /** `claim`, answered at once. */
  claimNow(scope: string, keys: readonly string[], nowMs: number, expiresMs: number): boolean {
    this.dropExpired(nowMs);
    const names = keys.map((k) => replayEntryName(scope, k));
    if (names.some((n) => (this.keys.get(n) ?? -Infinity) > nowMs)) return false;
    for (const n of names) this.restore(n, expiresMs);
    return true;
  }

  /** `forget`, done at once. */
  forgetNow(scope: string, keys: readonly string[]): void {
    for (const k of keys) this.keys.delete(replayEntryName(scope, k));
  }

  /** Remembers the entry `name` (see replayEntryName) until `expiresMs`, as the newest: how a store reads back what it wrote. */
  restore(name: string, expiresMs: number): void {
    this.keys.delete(name);
    while (this.keys.size >= this.maxEntries) {
      this.keys.delete(this.keys.keys().next().value as string);
      this.evicted++;
    }
    this.keys.set(name, expiresMs);
  }

  /** Forgets the entry `name`. */
  remove(name: string): void {
    this.keys.delete(name);
  }

  /** The entries not expired at `nowMs`, oldest first. */
  *entries(nowMs: number): IterableIterator<[name: string, expiresMs: number]> {
    for (const [name, expiresMs] of this.keys) if (expiresMs > nowMs) yield [name, expiresMs];
  }

  private dropExpired(nowMs: number): void {
    for (const [name, expiresMs] of this.keys) {
      if (expiresMs > nowMs) break;
      this.keys.delete(name);
    }
  }
}

/** One entry's name: scope and key joined by a newline, which neither holds. */
export function replayEntryName(scope: string, key: string): string {
  return `${scope}\n${key}`;
}
