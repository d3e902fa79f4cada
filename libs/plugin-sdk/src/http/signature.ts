import { HTTP_HEADERS } from '@host/protocol';
import { signatureHeaders, type SignatureRejection } from '@host/protocol/node';

// Signing and verifying are shared with the host (one implementation of the spec).
export { verifySignature, type SignatureCheck, type SignatureRejection } from '@host/protocol/node';

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
  return {
    ...signatureHeaders(secret, rawBody, options),
    [HTTP_HEADERS.protocolVersion]: '2',
    ...(options.pluginId ? { [HTTP_HEADERS.pluginId]: options.pluginId } : {}),
  };
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

/** The 401 answer for a delivery id already accepted within the window. */
export function replayRejection(deliveryId: string): { ok: false; code: SignatureRejection; message: string } {
  return { ok: false, code: 'signature.replayed', message: `delivery ${deliveryId} was already received; a replayed request is refused` };
}
