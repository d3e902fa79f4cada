import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { HTTP_DEFAULTS, HTTP_HEADERS, SIGNATURE_VERSION, signingPayload } from '@host/protocol';

/**
 * Request signing of the HTTP transport; docs/protocol/http-signing.md is the
 * spec and pins a worked example. The key is the secret text exactly as the
 * operator saw it (its UTF-8 bytes), not its base64url decoding, so every
 * language signs with the string it was given.
 */

/** A new per-plugin signing secret: 32 random bytes, base64url without padding (43 characters). */
export function generateSigningSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** `v1=` + lowercase hex HMAC-SHA256(secret, `${timestamp}.${deliveryId}.${rawBody}`). */
export function computeSignature(secret: string, timestamp: string, deliveryId: string, rawBody: string | Buffer): string {
  const mac = createHmac('sha256', secret);
  // Feeding the prefix and the raw body separately avoids re-encoding a
  // Buffer body: the signature covers the body bytes exactly as sent.
  mac.update(signingPayload(timestamp, deliveryId, ''));
  mac.update(rawBody);
  return `${SIGNATURE_VERSION}=${mac.digest('hex')}`;
}

export interface SignOptions {
  /** Unix seconds; defaults to now. */
  timestamp?: number;
  /** Defaults to a new UUID; retries of one delivery pass the same id. */
  deliveryId?: string;
}

/** The three signature headers for one request. */
export function signRequest(secret: string, rawBody: string | Buffer, options: SignOptions = {}): Record<string, string> {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const deliveryId = options.deliveryId ?? randomUUID();
  return {
    [HTTP_HEADERS.timestamp]: timestamp,
    [HTTP_HEADERS.deliveryId]: deliveryId,
    [HTTP_HEADERS.signature]: computeSignature(secret, timestamp, deliveryId, rawBody),
  };
}

export type SignatureFailure = 'missing_header' | 'bad_timestamp' | 'stale_timestamp' | 'bad_signature' | 'replayed';

export type VerifyResult = { ok: true; deliveryId: string; timestamp: number } | { ok: false; reason: SignatureFailure; message: string };

/**
 * Remembers delivery ids for the tolerance window so a captured request
 * cannot be sent again. Ids are forgotten once their timestamp leaves the
 * window, because a request that old is refused as stale anyway.
 */
export class ReplayGuard {
  private readonly seen = new Map<string, number>();
  constructor(private readonly windowSeconds: number = HTTP_DEFAULTS.signatureToleranceSeconds) {}

  /** Records the id; false when it was already recorded within the window. */
  remember(deliveryId: string, timestampSeconds: number, nowSeconds: number = Math.floor(Date.now() / 1000)): boolean {
    this.prune(nowSeconds);
    if (this.seen.has(deliveryId)) return false;
    this.seen.set(deliveryId, timestampSeconds);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }

  // Ids arrive roughly in timestamp order, so expired ones sit at the front
  // of the Map's insertion order; stopping at the first fresh one keeps this
  // O(expired) instead of O(all).
  private prune(nowSeconds: number): void {
    for (const [id, ts] of this.seen) {
      if (nowSeconds - ts <= this.windowSeconds) break;
      this.seen.delete(id);
    }
  }
}

export interface VerifyOptions {
  secret: string;
  rawBody: string | Buffer;
  /** Request headers with lowercase names (as node:http gives them). */
  headers: Record<string, string | string[] | undefined>;
  nowSeconds?: number;
  toleranceSeconds?: number;
  /** Pass one to refuse replayed delivery ids; checked only after the signature is valid. */
  replayGuard?: ReplayGuard;
}

function header(headers: VerifyOptions['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Checks a signed request the way a plugin must: headers, clock window, HMAC, then replay. */
export function verifySignature(options: VerifyOptions): VerifyResult {
  const timestamp = header(options.headers, HTTP_HEADERS.timestamp);
  const deliveryId = header(options.headers, HTTP_HEADERS.deliveryId);
  const signature = header(options.headers, HTTP_HEADERS.signature);
  if (!timestamp || !deliveryId || !signature) {
    return { ok: false, reason: 'missing_header', message: `The request lacks ${HTTP_HEADERS.timestamp}, ${HTTP_HEADERS.deliveryId} or ${HTTP_HEADERS.signature}.` };
  }
  if (!/^\d{1,15}$/.test(timestamp)) {
    return { ok: false, reason: 'bad_timestamp', message: `${HTTP_HEADERS.timestamp} must be unix seconds in decimal.` };
  }
  const ts = Number(timestamp);
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? HTTP_DEFAULTS.signatureToleranceSeconds;
  if (Math.abs(now - ts) > tolerance) {
    return { ok: false, reason: 'stale_timestamp', message: `The timestamp is ${now - ts} s away from this clock; at most ${tolerance} s is accepted.` };
  }
  const expected = Buffer.from(computeSignature(options.secret, timestamp, deliveryId, options.rawBody));
  // Several comma-separated signatures let a host sign with an old and a new secret during rotation.
  const match = signature.split(',').some((candidate) => {
    const given = Buffer.from(candidate.trim());
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!match) return { ok: false, reason: 'bad_signature', message: 'The signature does not match the body and the signing secret.' };
  if (options.replayGuard && !options.replayGuard.remember(deliveryId, ts, now)) {
    return { ok: false, reason: 'replayed', message: `Delivery ${deliveryId} was already received.` };
  }
  return { ok: true, deliveryId, timestamp: ts };
}
