/** One admin app session as a store keeps it: never the session's secret, only its SHA-256. */
export interface StoredAdminSession {
  /** SHA-256 (hex) of the session's secret id, the key. */
  tokenSha256: string;
  /** The CSRF token requests that change something must carry (worthless without the session cookie). */
  csrfToken: string;
  /** When it began and when it was last used, in milliseconds of the host's clock. */
  createdMs: number;
  lastUsedMs: number;
}

/** The bounds a store applies when a session is added (see SessionOptions of the admin API). */
export interface AdminSessionBounds {
  maxSessions: number;
  lifetimeMs: number;
  idleMs: number;
  now: number;
}

/**
 * Where admin app sessions live. In memory for one host (a restart ends
 * them); in the SQL store when several hosts share a database, so a session
 * begun on one replica is answered by every replica and a sign-out on one
 * ends it on all.
 */
export interface AdminSessionStore {
  /**
   * Adds a session, forgetting ended ones (beyond `lifetimeMs` or `idleMs`)
   * and the least recently used beyond `maxSessions` (the new one included).
   */
  add(session: StoredAdminSession, bounds: AdminSessionBounds): Promise<void>;
  get(tokenSha256: string): Promise<StoredAdminSession | undefined>;
  /** Marks it used at `lastUsedMs`. */
  touch(tokenSha256: string, lastUsedMs: number): Promise<void>;
  /** Ends it; whether there was one. */
  remove(tokenSha256: string): Promise<boolean>;
  /** How many it keeps. */
  count(): Promise<number>;
  /** Ends every session (the admin token changed); how many there were. */
  clear(): Promise<number>;
}

/** Sessions of one host, in memory, least recently used first. */
export class MemoryAdminSessionStore implements AdminSessionStore {
  private readonly sessions = new Map<string, StoredAdminSession>();

  async add(session: StoredAdminSession, b: AdminSessionBounds): Promise<void> {
    for (const [k, s] of this.sessions)
      if (b.now - s.createdMs >= b.lifetimeMs || b.now - s.lastUsedMs >= b.idleMs) this.sessions.delete(k);
    // Map order is insertion order and `touch` re-inserts: the first is the least recently used.
    while (this.sessions.size >= b.maxSessions) this.sessions.delete(this.sessions.keys().next().value as string);
    this.sessions.set(session.tokenSha256, { ...session });
  }

  async get(tokenSha256: string): Promise<StoredAdminSession | undefined> {
    const s = this.sessions.get(tokenSha256);
    return s && { ...s };
  }

  async touch(tokenSha256: string, lastUsedMs: number): Promise<void> {
    const s = this.sessions.get(tokenSha256);
    if (!s) return;
    s.lastUsedMs = lastUsedMs;
    this.sessions.delete(tokenSha256);
    this.sessions.set(tokenSha256, s);
  }

  async remove(tokenSha256: string): Promise<boolean> {
    return this.sessions.delete(tokenSha256);
  }

  async count(): Promise<number> {
    return this.sessions.size;
  }

  async clear(): Promise<number> {
    const n = this.sessions.size;
    this.sessions.clear();
    return n;
  }
}
