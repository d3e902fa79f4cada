import { randomBytes } from 'node:crypto';

/**
 * Request signing of the HTTP transport. The signature itself comes from
 * @host/protocol/node, which the Node SDK verifies with, so host and SDK
 * cannot sign differently; docs/protocol/http-signing.md is the spec.
 */
export { computeSignature, signatureHeaders as signRequest, type SignatureOptions as SignOptions } from '@host/protocol/node';

/** A new per-plugin signing secret: 32 random bytes, base64url without padding (43 characters). */
export function generateSigningSecret(): string {
  return randomBytes(32).toString('base64url');
}
