import { CSRF_HEADER, isSafeMethod, SESSION_COOKIE, type SessionView } from '@host/admin-api';
import { HostError, MemoryAdminSessionStore, type AdminSessionStore, type StoredAdminSession } from '@host/host-core';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';

export interface SessionOptions {
  /** Sessions kept at once; a new one beyond it ends the least recently used (default 16). */
  maxSessions?: number;
  /** Longest life of a session, however active (default 12 hours). */
  lifetimeMs?: number;
  /** A session ends after this long without a request (default 1 hour). */
  idleMs?: number;
  /** Where sessions live: default in memory (a restart ends them); the SQL store shares them between replicas. */
  store?: AdminSessionStore;
  now?: () => number;
}

export const DEFAULT_SESSION_OPTIONS = {
  maxSessions: 16,
  lifetimeMs: 12 * 60 * 60 * 1000,
  idleMs: 60 * 60 * 1000,
} as const;

/** A session's last use is written again only after this long (idle time is counted to within it). */
const TOUCH_EVERY_MS = 15_000;

function digest(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex');
}

/**
 * Admin sessions of the web app, bounded in number (the least recently used
 * goes first), in lifetime and in idle time. Kept in an {@link AdminSessionStore}:
 * in memory by default, in the SQL store when replicas share one (any replica
 * answers any session; a sign-out ends it everywhere). Only a digest of each
 * session id is kept, so neither a lookup's timing nor the store reveals the ids.
 */
export class SessionStore {
  private readonly store: AdminSessionStore;
  private readonly o: Required<Omit<SessionOptions, 'now' | 'store'>> & { now: () => number };

  constructor(options: SessionOptions = {}) {
    const { store, ...rest } = options;
    this.store = store ?? new MemoryAdminSessionStore();
    this.o = { ...DEFAULT_SESSION_OPTIONS, now: Date.now, ...rest };
  }

  /** How many sessions are kept. */
  size(): Promise<number> {
    return this.store.count();
  }

  /** Starts a session; answers its secret id (for the cookie) and its view. */
  async create(): Promise<{ id: string; view: SessionView }> {
    const now = this.o.now();
    const id = randomBytes(32).toString('base64url');
    const session: StoredAdminSession = {
      tokenSha256: digest(id),
      csrfToken: randomBytes(32).toString('base64url'),
      createdMs: now,
      lastUsedMs: now,
    };
    await this.store.add(session, { maxSessions: this.o.maxSessions, lifetimeMs: this.o.lifetimeMs, idleMs: this.o.idleMs, now });
    return { id, view: this.view(session) };
  }

  /** The live session of an id, marked as used now; undefined when it has ended or never was. */
  async use(id: string): Promise<{ view: SessionView; csrfToken: string } | undefined> {
    const key = digest(id);
    const s = await this.store.get(key);
    if (!s) return undefined;
    const now = this.o.now();
    if (this.ended(s, now)) {
      await this.store.remove(key);
      return undefined;
    }
    if (now - s.lastUsedMs >= Math.min(TOUCH_EVERY_MS, this.o.idleMs / 4) || this.store instanceof MemoryAdminSessionStore)
      await this.store.touch(key, now);
    return { view: this.view(s), csrfToken: s.csrfToken };
  }

  /** Ends a session; whether there was one. */
  end(id: string): Promise<boolean> {
    return this.store.remove(digest(id));
  }

  get lifetimeSeconds(): number {
    return Math.floor(this.o.lifetimeMs / 1000);
  }

  private ended(s: StoredAdminSession, now: number): boolean {
    return now - s.createdMs >= this.o.lifetimeMs || now - s.lastUsedMs >= this.o.idleMs;
  }

  private view(s: StoredAdminSession): SessionView {
    return {
      csrfToken: s.csrfToken,
      createdAt: new Date(s.createdMs).toISOString(),
      expiresAt: new Date(s.createdMs + this.o.lifetimeMs).toISOString(),
      idleTimeoutSeconds: Math.floor(this.o.idleMs / 1000),
    };
  }
}

/** The session id of the request's cookie, if any. */
export function sessionCookieOf(req: Request): string | undefined {
  const header = req.get('cookie');
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{16,128}$/.test(value) ? value : undefined;
    }
  }
  return undefined;
}

/** Sets (maxAgeSeconds > 0) or clears (0) the session cookie: HttpOnly, SameSite=Strict, only for /api. */
export function setSessionCookie(req: Request, res: Response, id: string, maxAgeSeconds: number): void {
  // Behind a TLS-terminating proxy the request says so in X-Forwarded-Proto; a false claim only makes the cookie stricter.
  const secure = req.secure || req.get('x-forwarded-proto') === 'https' ? '; Secure' : '';
  res.append('Set-Cookie', `${SESSION_COOKIE}=${id}; Path=/api; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure}`);
}

/**
 * Refuses a request sent by a page of another site: a `Sec-Fetch-Site` other
 * than same-origin (or none, for typed URLs), or an `Origin` whose host is not
 * the one the request was sent to.
 */
export function checkSameOrigin(req: Request): void {
  const site = req.get('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    throw new HostError('ORIGIN_REFUSED', undefined, { secFetchSite: site });
  }
  const origin = req.get('origin');
  if (origin === undefined) return;
  let host: string | undefined;
  try {
    host = new URL(origin).host;
  } catch {
    host = undefined;
  }
  if (host === undefined || host !== req.get('host')) throw new HostError('ORIGIN_REFUSED', undefined, { origin });
}

function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * Checks a request that carries a session cookie and no bearer token: the
 * session must be live, and a request that changes something must come from
 * this host's pages and carry the session's CSRF token.
 */
export async function checkSessionRequest(req: Request, sessions: SessionStore, id: string): Promise<SessionView> {
  const s = await sessions.use(id);
  if (!s) throw new HostError('SESSION_EXPIRED');
  if (!isSafeMethod(req.method)) {
    checkSameOrigin(req);
    if (!sameSecret(req.get(CSRF_HEADER), s.csrfToken)) throw new HostError('CSRF_TOKEN_INVALID');
  }
  return s.view;
}
