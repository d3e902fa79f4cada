import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { HTTP_DEFAULTS, HTTP_HEADERS, SIGNATURE_VERSION, signingPayload } from '@host/protocol';

/** Why a request was refused before the plugin saw it (the `code` of the 401 body). */
export type SignatureRejection = 'signature.missing' | 'signature.malformed' | 'signature.expired' | 'signature.invalid' | 'signature.replayed';

export type SignatureCheck = { ok: true; deliveryId: string; timestamp: number } | { ok: false; code: SignatureRejection; message: string };

const DELIVERY_ID = /^[A-Za-z0-9_-]{1,128}$/;
const TIMESTAMP = /^\d{1,12}$/;
const SIGNATURE = /^v1=[0-9a-f]{64}$/;


function hmacHex(secret: string, timestamp: string, deliveryId: string, rawBody: Buffer): string {
  return createHmac('sha256', secret).update(signingPayload(timestamp, deliveryId, '')).update(rawBody).digest('hex');
}

/**
 * Headers that sign a request exactly as the host does, for a plugin's own
 * tests and tools: `x-host-signature` is `v1=` + hex HMAC-SHA256(secret,
 * `${timestamp}.${deliveryId}.${rawBody}`).
 *
 * @example
 * ```ts
 * import { signRequest } from '@host/plugin-sdk-v2/http';
 *
 * const body = JSON.stringify({ hello: 'world' });
 * const headers = signRequest('my-secret', body, { pluginId: 'com.example.echo' });
 * // fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body })
 * ```
 */
export function signRequest(
  secret: string,
  rawBody: string | Buffer,
  options: { timestamp?: number; deliveryId?: string; pluginId?: string } = {},
): Record<string, string> {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const deliveryId = options.deliveryId ?? randomUUID();
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  return {
    [HTTP_HEADERS.timestamp]: timestamp,
    [HTTP_HEADERS.deliveryId]: deliveryId,
    [HTTP_HEADERS.signature]: `${SIGNATURE_VERSION}=${hmacHex(secret, timestamp, deliveryId, body)}`,
    [HTTP_HEADERS.protocolVersion]: '2',
    ...(options.pluginId ? { [HTTP_HEADERS.pluginId]: options.pluginId } : {}),
  };
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : value;
}

/**
 * Remembers delivery ids whose signature was valid, until their timestamp
 * leaves the tolerance window (after that the timestamp check refuses them
 * anyway). Bounded: past `maxEntries` the oldest ids are forgotten first.
 */
export class ReplayGuard {
  private readonly seen = new Map<string, number>();

  constructor(private readonly maxEntries = 100_000) {}

  /** Records the id; false when it was already seen and has not expired. */
  remember(deliveryId: string, expiresAtMs: number, nowMs: number): boolean {
    const known = this.seen.get(deliveryId);
    if (known !== undefined && known > nowMs) return false;
    this.seen.delete(deliveryId);
    this.seen.set(deliveryId, expiresAtMs);
    this.prune(nowMs);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }

  private prune(nowMs: number): void {
    for (const [id, expires] of this.seen) {
      if (this.seen.size <= this.maxEntries && expires > nowMs) break;
      this.seen.delete(id);
    }
  }
}

/**
 * Checks the host's signature over the raw body (docs/protocol/http-signing.md,
 * steps 1 to 3): headers present, the timestamp within `toleranceSeconds` of
 * this clock, and an HMAC equal, in constant time, to the one computed with
 * any accepted secret (several during a rotation; the header may also carry
 * several comma-separated signatures). Replay (step 4) is checked separately
 * with ReplayGuard, after the caller decided it will process the request.
 */
export function verifySignature(args: {
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
  secrets: readonly string[];
  toleranceSeconds?: number;
  nowMs?: number;
}): SignatureCheck {
  const tolerance = args.toleranceSeconds ?? HTTP_DEFAULTS.signatureToleranceSeconds;
  const now = args.nowMs ?? Date.now();
  const timestamp = header(args.headers, HTTP_HEADERS.timestamp);
  const deliveryId = header(args.headers, HTTP_HEADERS.deliveryId);
  const signature = header(args.headers, HTTP_HEADERS.signature);
  if (timestamp === undefined || deliveryId === undefined || signature === undefined) {
    const missing = [
      timestamp === undefined && HTTP_HEADERS.timestamp,
      deliveryId === undefined && HTTP_HEADERS.deliveryId,
      signature === undefined && HTTP_HEADERS.signature,
    ].filter(Boolean);
    return { ok: false, code: 'signature.missing', message: `missing header(s) ${missing.join(', ')}; only requests signed by the host are accepted` };
  }
  const candidates = signature
    .split(',')
    .map((s) => s.trim())
    .filter((s) => SIGNATURE.test(s));
  if (!TIMESTAMP.test(timestamp) || !DELIVERY_ID.test(deliveryId) || candidates.length === 0) {
    return { ok: false, code: 'signature.malformed', message: 'the signature headers are malformed (expected unix seconds, a delivery id and v1=<64 lowercase hex>)' };
  }
  const seconds = Number(timestamp);
  const skew = Math.round(now / 1000 - seconds);
  if (Math.abs(now / 1000 - seconds) > tolerance) {
    return {
      ok: false,
      code: 'signature.expired',
      message: `the request was signed ${Math.abs(skew)} s ${skew >= 0 ? 'ago' : 'in the future'} by this server's clock (tolerance ${tolerance} s); keep both clocks in sync with NTP`,
    };
  }
  let valid = false;
  for (const secret of args.secrets) {
    const expected = Buffer.from(hmacHex(secret, timestamp, deliveryId, args.rawBody), 'hex');
    for (const candidate of candidates) {
      const given = Buffer.from(candidate.slice(SIGNATURE_VERSION.length + 1), 'hex');
      // Every pair is compared, so the time taken does not tell which one matched.
      if (given.length === expected.length && timingSafeEqual(expected, given)) valid = true;
    }
  }
  if (!valid) {
    return { ok: false, code: 'signature.invalid', message: 'the signature does not match; configure the signing secret shown when the plugin was registered' };
  }
  return { ok: true, deliveryId, timestamp: seconds };
}

/** The 401 answer for a delivery id already accepted within the window. */
export function replayRejection(deliveryId: string): { ok: false; code: SignatureRejection; message: string } {
  return { ok: false, code: 'signature.replayed', message: `delivery ${deliveryId} was already received; a replayed request is refused` };
}
