import { archiveSha256, archiveSize, type ArchiveBytes } from '@host/host-core';
import { createHash } from 'node:crypto';
import { chunkCount, CHUNK_BYTES, readChunks, readWhole, writeChunks, type ChunkTable } from './chunked-bytes';
import type { SqlDatabase } from './database';

/**
 * Package archives by the SHA-256 of their bytes, where every host can fetch
 * them. The SQL store keeps them in the database; an object store (a bucket
 * keyed by the digest) can implement the same interface.
 */
export interface PackageArchiveStore {
  /**
   * Keeps `archive` (once, however often it is put); answers its SHA-256 in lowercase hex. An archive
   * given as a reader (an uploaded file) is read a piece at a time, never whole.
   */
  put(archive: ArchiveBytes): Promise<string>;
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
    super(`The package archive ${sha256} in the package store does not match its SHA-256; reinstall the plugin from its package.`);
    this.name = 'ArchiveDigestMismatchError';
  }
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

const DIGEST = /^[0-9a-f]{64}$/;

/** Bytes of one stored piece of an archive (see CHUNK_BYTES). */
export const ARCHIVE_CHUNK_BYTES = CHUNK_BYTES;

const ARCHIVE_CHUNKS: ChunkTable = { table: 'host_package_archive_chunks', key: 'sha256' };

/**
 * Archives in host_package_archives (digest, size, time) and their bytes in
 * host_package_archive_chunks, ARCHIVE_CHUNK_BYTES a row, written in one
 * transaction and read one row at a time (see chunked-bytes.ts). Rows written before the chunk table
 * existed hold the whole archive in host_package_archives.bytes and are read
 * as they are.
 */
export class SqlPackageArchiveStore implements PackageArchiveStore {
  constructor(
    private readonly db: SqlDatabase,
    private readonly chunkBytes = ARCHIVE_CHUNK_BYTES,
  ) {}

  async put(archive: ArchiveBytes): Promise<string> {
    const sha256 = archiveSha256(archive);
    if (await this.has(sha256)) return sha256;
    const size = archiveSize(archive);
    const chunks = chunkCount(size, this.chunkBytes);
    await this.db.transaction(async (tx) => {
      const added = await tx.query(
        'INSERT INTO host_package_archives (sha256, bytes, size, chunks) VALUES ($1, NULL, $2, $3) ON CONFLICT (sha256) DO NOTHING RETURNING sha256',
        [sha256, size, chunks],
      );
      // Another host stored it meanwhile.
      if (added.length === 0) return;
      await writeChunks(tx, ARCHIVE_CHUNKS, sha256, archive, this.chunkBytes);
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
    const bytes =
      head.chunks === null
        ? await readWhole(this.db, 'host_package_archives', 'bytes', 'sha256', sha256)
        : await readChunks(this.db, ARCHIVE_CHUNKS, sha256, head.chunks, Number(head.size));
    if (!bytes || sha256Hex(bytes) !== sha256) throw new ArchiveDigestMismatchError(sha256);
    return bytes;
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
