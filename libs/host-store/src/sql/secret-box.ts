import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { dirname } from 'node:path';
import { writeFileAtomic } from '@host/host-fs';

const PREFIX = 'sealed:v1:';

/** A sealed value cannot be opened with the host key in use. */
export class HostKeyMismatchError extends Error {
  constructor(what: string) {
    super(
      `${what} was sealed with another host key. Every host sharing a database needs the same key ` +
        '(HOST_KEY_FILE; see docs/operator/cluster.md); restore the key that sealed it.',
    );
    this.name = 'HostKeyMismatchError';
  }
}

/** The host key file is missing, unreadable or not a key. */
export class HostKeyError extends Error {
  constructor(file: string, reason: string) {
    super(`The host key ${file} cannot be used: ${reason}. It must hold 32 random bytes as 64 hex digits (openssl rand -hex 32).`);
    this.name = 'HostKeyError';
  }
}

/**
 * Seals secrets (HTTP plugin signing secrets, plugin settings) before they
 * reach the database, with AES-256-GCM under the host key: a copy of the
 * database alone reveals none of them, and a changed value fails to open.
 */
export class SecretBox {
  /** A short fingerprint of the key (not the key), to tell which key sealed a database. */
  readonly keyId: string;

  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('A host key is 32 bytes.');
    this.keyId = createHash('sha256').update('host-key-id\0').update(key).digest('hex').slice(0, 16);
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
  }

  /** Opens what `seal` made; `what` names the value in the error when it cannot be opened. */
  open(sealed: string, what: string): string {
    if (!sealed.startsWith(PREFIX)) throw new HostKeyMismatchError(what);
    const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      throw new HostKeyMismatchError(what);
    }
  }

  static isSealed(value: string): boolean {
    return value.startsWith(PREFIX);
  }
}

/**
 * The host key: read from `file`, or, when the file does not exist and
 * `create` is set, made of 32 random bytes and written there (mode 0600).
 */
export async function loadHostKey(file: string, options: { create: boolean }): Promise<SecretBox> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' || !options.create) throw new HostKeyError(file, code === 'ENOENT' ? 'it does not exist' : String(code));
    const key = randomBytes(32);
    await fs.mkdir(dirname(file), { recursive: true });
    await writeFileAtomic(file, key.toString('hex') + '\n', { mode: 0o600 });
    return new SecretBox(key);
  }
  const hex = text.trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new HostKeyError(file, 'it does not hold 64 hex digits');
  return new SecretBox(Buffer.from(hex, 'hex'));
}
