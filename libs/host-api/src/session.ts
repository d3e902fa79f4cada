import { CSRF_HEADER, isSafeMethod, SESSION_COOKIE, type SessionView } from '@host/admin-api';
import { HostError } from '@host/host-core';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';

export interface SessionOptions {
  /** Sessions kept at once; a new one beyond it ends the least recently used (default 16). */
  maxSessions?: number;
  /** Longest life of a session, however active (default 12 hours). */
  lifetimeMs?: number;
  /** A session ends after this long without a request (default 1 hour). */
  idleMs?: number;
  /** Wrong tokens accepted per minute at sign-in before it answers 429 (default 10). */
  maxFailedSignInsPerMinute?: number;
  now?: () => number;
}

export const DEFAULT_SESSION_OPTIONS = {
  maxSessions: 16,
  lifetimeMs: 12 * 60 * 60 * 1000,
  idleMs: 60 * 60 * 1000,
  maxFailedSignInsPerMinute: 10,
} as const;

interface Session {
  csrfToken: string;
  createdAt: number;
  lastUsedAt: number;
}

function digest(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex');
}

/**
 * Admin sessions of the web app, in memory: a host restart ends them all.
 * Bounded in number (the least recently used goes first), in lifetime and
 * in idle time. Only a digest of each session id is kept as the key, so a
 * lookup reveals nothing about the ids through timing.
 */
export class SessionStore {
  private readonly sessions = new Map<string, Session>();
  private readonly o: Required<Omit<SessionOptions, 'now'>> & { now: () => number };
  private failedSignIns: number[] = [];

  constructor(options: SessionOptions = {}) {
    this.o = { ...DEFAULT_SESSION_OPTIONS, now: Date.now, ...options };
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Starts a session; answers its secret id (for the cookie) and its view. */
  create(): { id: string; view: SessionView } {
    const now = this.o.now();
    this.prune(now);
    while (this.sessions.size >= this.o.maxSessions) {
      // Map order is insertion order and `touch` re-inserts: the first is the least recently used.
      const oldest = this.sessions.keys().next().value as string;
      this.sessions.delete(oldest);
    }
    const id = randomBytes(32).toString('base64url');
    const session: Session = { csrfToken: randomBytes(32).toString('base64url'), createdAt: now, lastUsedAt: now };
    this.sessions.set(digest(id), session);
    return { id, view: this.view(session) };
  }

  /** The live session of an id, marked as used now; undefined when it has ended or never was. */
  use(id: string): { view: SessionView; csrfToken: string } | undefined {
    const key = digest(id);
    const s = this.sessions.get(key);
    if (!s) return undefined;
    const now = this.o.now();
    if (this.ended(s, now)) {
      this.sessions.delete(key);
      return undefined;
    }
    s.lastUsedAt = now;
    this.sessions.delete(key);
    this.sessions.set(key, s);
    return { view: this.view(s), csrfToken: s.csrfToken };
  }

  /** Ends a session; whether there was one. */
  end(id: string): boolean {
    return this.sessions.delete(digest(id));
  }

  /** Records a wrong token at sign-in (only the newest few are kept). */
  signInFailed(): void {
    this.failedSignIns.push(this.o.now());
    if (this.failedSignIns.length > this.o.maxFailedSignInsPerMinute) this.failedSignIns.shift();
  }

  /** Whether sign-in is refused for now because of too many wrong tokens. */
  signInThrottled(): boolean {
    const since = this.o.now() - 60_000;
    this.failedSignIns = this.failedSignIns.filter((t) => t > since);
    return this.failedSignIns.length >= this.o.maxFailedSignInsPerMinute;
  }

  get lifetimeSeconds(): number {
    return Math.floor(this.o.lifetimeMs / 1000);
  }

  private ended(s: Session, now: number): boolean {
    return now - s.createdAt >= this.o.lifetimeMs || now - s.lastUsedAt >= this.o.idleMs;
  }

  private prune(now: number): void {
    for (const [k, s] of this.sessions) if (this.ended(s, now)) this.sessions.delete(k);
  }

  private view(s: Session): SessionView {
    return {
      csrfToken: s.csrfToken,
      createdAt: new Date(s.createdAt).toISOString(),
      expiresAt: new Date(s.createdAt + this.o.lifetimeMs).toISOString(),
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
export function checkSessionRequest(req: Request, sessions: SessionStore, id: string): SessionView {
  const s = sessions.use(id);
  if (!s) throw new HostError('SESSION_EXPIRED');
  if (!isSafeMethod(req.method)) {
    checkSameOrigin(req);
    if (!sameSecret(req.get(CSRF_HEADER), s.csrfToken)) throw new HostError('CSRF_TOKEN_INVALID');
  }
  return s.view;
}
