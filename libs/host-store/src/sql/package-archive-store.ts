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

/**
 * Bytes of one stored piece of an archive. A whole archive in one value made
 * the embedded database (PGlite, PostgreSQL compiled to WebAssembly) grow its
 * memory by dozens of times the archive and keep much of it; a piece of this
 * size costs it a few MB at a time.
 */
export const ARCHIVE_CHUNK_BYTES = 1024 * 1024;

/**
 * Archives in host_package_archives (digest, size, time) and their bytes in
 * host_package_archive_chunks, ARCHIVE_CHUNK_BYTES a row, written in one
 * transaction and read one row at a time. The bytes cross as base64 text
 * (decode and encode in SQL): the embedded database's handling of bytea
 * parameters and results costs about a second per MB, base64 a tenth of it. Rows written before the chunk table
 * existed hold the whole archive in host_package_archives.bytes and are read
 * as they are.
 */
export class SqlPackageArchiveStore implements PackageArchiveStore {
  constructor(
    private readonly db: SqlDatabase,
    private readonly chunkBytes = ARCHIVE_CHUNK_BYTES,
  ) {}

  async put(archive: Uint8Array): Promise<string> {
    const sha256 = sha256Hex(archive);
    if (await this.has(sha256)) return sha256;
    const chunks = Math.ceil(archive.byteLength / this.chunkBytes);
    await this.db.transaction(async (tx) => {
      const added = await tx.query(
        'INSERT INTO host_package_archives (sha256, bytes, size, chunks) VALUES ($1, NULL, $2, $3) ON CONFLICT (sha256) DO NOTHING RETURNING sha256',
        [sha256, archive.byteLength, chunks],
      );
      // Another host stored it meanwhile.
      if (added.length === 0) return;
      for (let n = 0; n < chunks; n++) {
        const at = n * this.chunkBytes;
        const piece = Buffer.from(archive.buffer, archive.byteOffset + at, Math.min(this.chunkBytes, archive.byteLength - at));
        // As base64 text: the embedded database's own bytea parameters cost about a second per MB.
        await tx.query(`INSERT INTO host_package_archive_chunks (sha256, n, bytes) VALUES ($1, $2, decode($3, 'base64'))`, [
          sha256,
          n,
          piece.toString('base64'),
        ]);
      }
    });
    return sha256;
  }

  async get(sha256: string): Promise<Uint8Array | undefined> {
    if (!DIGEST.test(sha256)) return undefined;
    const heads = await this.db.query<{ size: string | number; chunks: number | null }>(
      'SELECT size, chunks FROM host_package_archives WHERE sha256 = $1',
      [sha256],
    );
    const head = heads[0];
    if (!head) return undefined;
    if (head.chunks === null) {
      const rows = await this.db.query<{ bytes: string | null }>(
        `SELECT encode(bytes, 'base64') AS bytes FROM host_package_archives WHERE sha256 = $1`,
        [sha256],
      );
      const bytes = new Uint8Array(Buffer.from(rows[0]?.bytes ?? '', 'base64'));
      if (sha256Hex(bytes) !== sha256) throw new ArchiveDigestMismatchError(sha256);
      return bytes;
    }
    const size = Number(head.size);
    const out = Buffer.allocUnsafe(size);
    const hash = createHash('sha256');
    let at = 0;
    for (let n = 0; n < head.chunks; n++) {
      const rows = await this.db.query<{ bytes: string }>(
        `SELECT encode(bytes, 'base64') AS bytes FROM host_package_archive_chunks WHERE sha256 = $1 AND n = $2`,
        [sha256, n],
      );
      const piece = rows[0] ? Buffer.from(rows[0].bytes, 'base64') : undefined;
      if (!piece || at + piece.byteLength > size) throw new ArchiveDigestMismatchError(sha256);
      out.set(piece, at);
      hash.update(piece);
      at += piece.byteLength;
    }
    if (at !== size || hash.digest('hex') !== sha256) throw new ArchiveDigestMismatchError(sha256);
    return out;
  }

  async has(sha256: string): Promise<boolean> {
    if (!DIGEST.test(sha256)) return false;
    return (await this.db.query('SELECT 1 FROM host_package_archives WHERE sha256 = $1', [sha256])).length > 0;
  }

  async retainOnly(keep: ReadonlySet<string>, graceMilliseconds = 0): Promise<number> {
    // The chunks go with their archive (ON DELETE CASCADE).
    const gone = await this.db.query(
      `DELETE FROM host_package_archives
       WHERE NOT (sha256 = ANY($1::text[])) AND saved_at <= now() - make_interval(secs => $2::double precision / 1000)
       RETURNING sha256`,
      [[...keep], graceMilliseconds],
    );
    return gone.length;
  }
}
