import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

/** ASN.1 prefix of a PKCS#8 Ed25519 private key; the 32-byte seed follows it. */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * The 32-byte Ed25519 seed of a bot: its secret repeated until it is at
 * least 32 bytes long, then cut to 32 bytes (the platform's rule).
 */
export function seedFromSecret(secret: string): Buffer {
  const bytes = Buffer.from(secret, 'utf8');
  if (bytes.length === 0) throw new Error('a QQ Bot secret must not be empty');
  let seed = bytes;
  while (seed.length < 32) seed = Buffer.concat([seed, bytes]);
  return seed.subarray(0, 32);
}

/** The Ed25519 key pair of a bot secret: the platform signs webhooks with the private key, the host verifies with the public one. */
export interface BotKeys {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

export function keysFromSecret(secret: string): BotKeys {
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seedFromSecret(secret)]), format: 'der', type: 'pkcs8' });
  return { privateKey, publicKey: createPublicKey(privateKey) };
}

/** Ed25519 signature (hex) of `message`. */
export function signHex(privateKey: KeyObject, message: string | Buffer): string {
  return sign(null, typeof message === 'string' ? Buffer.from(message, 'utf8') : message, privateKey).toString('hex');
}

/** The answer to a callback-URL validation (op 13): the signature over `event_ts + plain_token`. */
export function validationSignature(privateKey: KeyObject, eventTs: string, plainToken: string): string {
  return signHex(privateKey, eventTs + plainToken);
}

const SIGNATURE_HEX = /^[0-9a-fA-F]{128}$/;

/**
 * True when `signatureHex` is a valid Ed25519 signature of `timestamp` followed
 * by the raw body bytes. Never throws: a malformed signature is simply false.
 */
export function verifyWebhook(publicKey: KeyObject, timestamp: string, body: Buffer, signatureHex: string): boolean {
  if (!SIGNATURE_HEX.test(signatureHex)) return false;
  const message = Buffer.concat([Buffer.from(timestamp, 'utf8'), body]);
  try {
    return verify(null, message, publicKey, Buffer.from(signatureHex, 'hex'));
  } catch {
    return false;
  }
}
