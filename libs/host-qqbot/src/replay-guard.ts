export interface ReplayGuardOptions {
  /** How long an id is remembered (default 10 minutes: twice the timestamp tolerance, so a replay is refused either way). */
  rememberMilliseconds?: number;
  /** Ids remembered at most (default 50,000); beyond that the oldest is forgotten first. */
  maxEntries?: number;
  now?: () => number;
}

/**
 * Event ids seen recently, bounded in time and count. A request whose
 * signature is valid but whose id was seen is a replay (or the platform
 * sending again what it already delivered): refused, not dispatched twice.
 * Requests older than the timestamp tolerance are refused before they get
 * here, so remembering ids a little longer than that tolerance suffices.
 */
export class ReplayGuard {
  /** id -> forget-after instant; Map keeps insertion order, which is also expiry order. */
  private readonly seen = new Map<string, number>();
  private readonly rememberMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  /** Ids forgotten before their time to stay within maxEntries. */
  evicted = 0;

  constructor(o: ReplayGuardOptions = {}) {
    this.rememberMs = o.rememberMilliseconds ?? 10 * 60_000;
    this.maxEntries = Math.max(1, o.maxEntries ?? 50_000);
    this.now = o.now ?? Date.now;
  }

  get size(): number {
    return this.seen.size;
  }

  /** Forgets `id`: its event was not taken after all (refused at admission), so the platform's next push of it is no replay. */
  forget(id: string): void {
    this.seen.delete(id);
  }

  /** Records `id`; false when it was already seen (a replay). */
  firstTime(id: string): boolean {
    const now = this.now();
    for (const [key, until] of this.seen) {
      if (until > now) break;
      this.seen.delete(key);
    }
    const until = this.seen.get(id);
    if (until !== undefined && until > now) return false;
    while (this.seen.size >= this.maxEntries) {
      const oldest = this.seen.keys().next().value as string;
      this.seen.delete(oldest);
      this.evicted++;
    }
    this.seen.set(id, now + this.rememberMs);
    return true;
  }
}
