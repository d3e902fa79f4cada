import { HostError, type RegistryStore } from '@host/host-core';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { AuthThrottle } from './auth-throttle';
import { checkSessionRequest, sessionCookieOf, type SessionStore } from './session';

/** Registry meta key of the admin token's SHA-256 (hex). The token itself is never stored. */
export const ADMIN_TOKEN_META_KEY = 'adminTokenSha256';
export const MIN_ADMIN_TOKEN_LENGTH = 16;

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export interface AdminTokenSetup {
  hash: string;
  /** Set when a token was generated now: show it once, it cannot be recovered. */
  generated?: string;
  source: 'environment' | 'stored' | 'generated';
  /** Set when a different token was stored before: sessions begun with the old one must end. */
  replaced?: boolean;
}

/**
 * The admin token: the configured one when given (its hash replaces the stored
 * one), else the stored hash, else a new random token (32 bytes, base64url)
 * whose hash is stored. `reset` forces a new token.
 */
export async function ensureAdminToken(store: RegistryStore, options: { token?: string; reset?: boolean } = {}): Promise<AdminTokenSetup> {
  if (options.token !== undefined) {
    if (options.token.length < MIN_ADMIN_TOKEN_LENGTH) {
      throw new Error(
        `The admin token must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters; use a long random value (or leave it unset to have one generated).`,
      );
    }
    const hash = hashToken(options.token);
    const before = await store.getMeta(ADMIN_TOKEN_META_KEY);
    if (before === hash) return { hash, source: 'environment' };
    await store.setMeta(ADMIN_TOKEN_META_KEY, hash);
    return { hash, source: 'environment', ...(before ? { replaced: true } : {}) };
  }
  const stored = await store.getMeta(ADMIN_TOKEN_META_KEY);
  if (stored && !options.reset) return { hash: stored, source: 'stored' };
  const generated = randomBytes(32).toString('base64url');
  const hash = hashToken(generated);
  if (options.reset) {
    await store.setMeta(ADMIN_TOKEN_META_KEY, hash);
    return { hash, generated, source: 'generated', ...(stored ? { replaced: true } : {}) };
  }
  // Another host on the same store may generate one at the same moment: the
  // first stored wins, and a host that lost shows no token it cannot accept.
  const winner = await store.setMetaIfAbsent(ADMIN_TOKEN_META_KEY, hash);
  return winner === hash ? { hash, generated, source: 'generated' } : { hash: winner, source: 'stored' };
}

/** Whether `token` is the admin token of `tokenHash`; compares hashes in constant time. */
export function isAdminToken(token: string, tokenHash: string): boolean {
  const expected = Buffer.from(tokenHash, 'hex');
  const given = Buffer.from(hashToken(token), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Requires `Authorization: Bearer <token>` (scripts) or, without that header,
 * a live session cookie of the admin app; with the cookie, a request that
 * changes something needs the session's CSRF token and a same-site origin.
 * The way the request was let in is left in `res.locals.adminSession`
 * (undefined for a bearer token). With a throttle, wrong bearer tokens count
 * against their client address as wrong tokens at sign-in do, and an address
 * past the limit is refused with AUTH_THROTTLED before its token is checked.
 */
export function requireAdmin(tokenHash: string, sessions?: SessionStore, throttle?: AuthThrottle): RequestHandler {
  return (req, res, next) => {
    const authorization = req.get('authorization');
    if (authorization !== undefined || !sessions) {
      const address = req.socket.remoteAddress;
      if (authorization !== undefined && throttle?.throttled(address, 'bearer')) {
        next(new HostError('AUTH_THROTTLED'));
        return;
      }
      const m = /^Bearer ([^\s]+)$/i.exec(authorization ?? '');
      if (m !== null && isAdminToken(m[1]!, tokenHash)) {
        next();
        return;
      }
      if (authorization !== undefined) throttle?.failed(address, 'bearer');
      next(new HostError('UNAUTHORIZED'));
      return;
    }
    const id = sessionCookieOf(req);
    if (id === undefined) {
      next(new HostError('UNAUTHORIZED'));
      return;
    }
    checkSessionRequest(req, sessions, id).then(
      (view) => {
        res.locals['adminSession'] = { id, view };
        next();
      },
      (e: unknown) => next(e),
    );
  };
}
