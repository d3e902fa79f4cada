import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { SignatureErrorCode } from '../src/error-codes';
import { HTTP_HEADERS, SIGNATURE_VERSION, signingPayload } from '../src/http';
import { HTTP_DEFAULTS } from '../src/limits';

/**
 * Request signing of the HTTP transport, for both sides: the host signs, the
 * Node SDK verifies (docs/protocol/http-signing.md is the spec and pins a
 * worked example). The key is the secret text exactly as the operator saw it
 * (its UTF-8 bytes), not its base64url decoding, so every language signs with
 * the string it was given.
 */

/** `v1=` + lowercase hex HMAC-SHA256(secret, `${timestamp}.${deliveryId}.${rawBody}`). */
export function computeSignature(secret: string, timestamp: string, deliveryId: string, rawBody: string | Uint8Array): string {
  const mac = createHmac('sha256', secret);
  // Feeding the prefix and the raw body separately avoids re-encoding a
  // Buffer body: the signature covers the body bytes exactly as sent.
  mac.update(signingPayload(timestamp, deliveryId, ''));
  mac.update(rawBody);
  return `${SIGNATURE_VERSION}=${mac.digest('hex')}`;
}

export interface SignatureOptions {
  /** Unix seconds; defaults to now. */
  timestamp?: number;
  /** Defaults to a new UUID; retries of one delivery pass the same id. */
  deliveryId?: string;
}

/** The three signature headers of one request: timestamp, delivery id and signature. */
export function signatureHeaders(secret: string, rawBody: string | Uint8Array, options: SignatureOptions = {}): Record<string, string> {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const deliveryId = options.deliveryId ?? randomUUID();
  return {
    [HTTP_HEADERS.timestamp]: timestamp,
    [HTTP_HEADERS.deliveryId]: deliveryId,
    [HTTP_HEADERS.signature]: computeSignature(secret, timestamp, deliveryId, rawBody),
  };
}

/** Why a request is refused as not signed by the host: a code of SIGNATURE_ERRORS. */
export type SignatureRejection = SignatureErrorCode;

export type SignatureCheck = { ok: true; deliveryId: string; timestamp: number } | { ok: false; code: SignatureRejection; message: string };

const DELIVERY_ID = /^[A-Za-z0-9_-]{1,128}$/;
const TIMESTAMP = /^\d{1,12}$/;
const SIGNATURE = /^v1=[0-9a-f]{64}$/;

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : value;
}

/**
 * Checks the host's signature over the raw body (docs/protocol/http-signing.md,
 * steps 1 to 3): headers present, the timestamp within `toleranceSeconds` of
 * this clock, and an HMAC equal, in constant time, to the one computed with
 * any accepted secret (several during a rotation; the header may also carry
 * several comma-separated signatures). Replay (step 4) is the caller's, after
 * it decided it will process the request.
 */
export function verifySignature(args: {
  /** Request headers with lowercase names (as node:http gives them). */
  headers: Record<string, string | string[] | undefined>;
  rawBody: string | Uint8Array;
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
    return {
      ok: false,
      code: 'signature.missing',
      message: `missing header(s) ${missing.join(', ')}; only requests signed by the host are accepted`,
    };
  }
  const candidates = signature
    .split(',')
    .map((s) => s.trim())
    .filter((s) => SIGNATURE.test(s));
  if (!TIMESTAMP.test(timestamp) || !DELIVERY_ID.test(deliveryId) || candidates.length === 0) {
    return {
      ok: false,
      code: 'signature.malformed',
      message: 'the signature headers are malformed (expected unix seconds, a delivery id and v1=<64 lowercase hex>)',
    };
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
    const expected = Buffer.from(computeSignature(secret, timestamp, deliveryId, args.rawBody).slice(SIGNATURE_VERSION.length + 1), 'hex');
    for (const candidate of candidates) {
      const given = Buffer.from(candidate.slice(SIGNATURE_VERSION.length + 1), 'hex');
      // Every pair is compared, so the time taken does not tell which one matched.
      if (given.length === expected.length && timingSafeEqual(expected, given)) valid = true;
    }
  }
  if (!valid) {
    return {
      ok: false,
      code: 'signature.invalid',
      message: 'the signature does not match; configure the signing secret shown when the plugin was registered',
    };
  }
  return { ok: true, deliveryId, timestamp: seconds };
}
