import { createHash } from 'node:crypto';
import type { SqlDatabase } from './database';

/**
 * Package archives by the SHA-256 of their bytes, where every host can fetch
 * them. The SQL store keeps them in the database; an object store (a bucket
 * keyed by the digest) can implement the same interface.
 */
export interface PackageArchiveStore {
  /** Keeps `archive` (once, however often it is put); answers its SHA-256 in lowercase hex. */
  put(archive: Uint8Array): Promise<string>;
  /** The archive whose SHA-256 is `sha256`; undefined when none is kept. The bytes are checked against the digest. */
  get(sha256: string): Promise<Uint8Array | undefined>;
  has(sha256: string): Promise<boolean>;
  /**
   * Forgets every archive whose digest is not in `keep` and that was stored
   * at least `graceMilliseconds` ago (default 0): an archive another host
   * has just stored, before its record names it, is spared. Answers how many were removed.
   */
  retainOnly(keep: ReadonlySet<string>, graceMilliseconds?: number): Promise<number>;
}

/** A kept archive no longer matches its digest: the storage was damaged or changed behind the host's back. */
export class ArchiveDigestMismatchError extends Error {
  constructor(readonly sha256: string) {
    super(`The package archive ${sha256} in the database does not match its SHA-256; reinstall the plugin from its package.`);
    this.name = 'ArchiveDigestMismatchError';
  }
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

const DIGEST = /^[0-9a-f]{64}$/;

export class SqlPackageArchiveStore implements PackageArchiveStore {
  constructor(private readonly db: SqlDatabase) {}

  async put(archive: Uint8Array): Promise<string> {
    const sha256 = sha256Hex(archive);
    await this.db.query('INSERT INTO host_package_archives (sha256, bytes, size) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO NOTHING', [
      sha256,
      archive,
      archive.byteLength,
    ]);
    return sha256;
  }

  async get(sha256: string): Promise<Uint8Array | undefined> {
    if (!DIGEST.test(sha256)) return undefined;
    const rows = await this.db.query<{ bytes: Uint8Array }>('SELECT bytes FROM host_package_archives WHERE sha256 = $1', [sha256]);
    if (!rows[0]) return undefined;
    const bytes = new Uint8Array(rows[0].bytes);
    if (sha256Hex(bytes) !== sha256) throw new ArchiveDigestMismatchError(sha256);
    return bytes;
  }

  async has(sha256: string): Promise<boolean> {
    if (!DIGEST.test(sha256)) return false;
    return (await this.db.query('SELECT 1 FROM host_package_archives WHERE sha256 = $1', [sha256])).length > 0;
  }

  async retainOnly(keep: ReadonlySet<string>, graceMilliseconds = 0): Promise<number> {
    const gone = await this.db.query(
      `DELETE FROM host_package_archives
       WHERE NOT (sha256 = ANY($1::text[])) AND saved_at <= now() - make_interval(secs => $2::double precision / 1000)
       RETURNING sha256`,
      [[...keep], graceMilliseconds],
    );
    return gone.length;
  }
}
