import { archivePieces, type ArchiveBytes } from '@host/host-core';
import type { SqlQueryable } from './database';

/**
 * Bytes of one stored piece of a large value (a package archive). A whole
 * archive in one value made the embedded database (PGlite, PostgreSQL compiled
 * to WebAssembly) grow its memory by dozens of times the archive and keep much
 * of it; a piece of this size costs it a few MB at a time.
 */
export const CHUNK_BYTES = 1024 * 1024;

/** A table of pieces: `(<key column>, n, bytes)`, primary key (key, n). Names are the code's own, never input. */
export interface ChunkTable {
  table: string;
  key: string;
}

/**
 * Writes `bytes` as rows of `t` under `key`, `chunkBytes` a row; answers how
 * many. Call inside the transaction that writes the value's own row. The
 * pieces travel as base64 text (decoded in SQL): the embedded database's own
 * handling of bytea parameters costs about a second per MB, base64 a tenth of it.
 */
export async function writeChunks(
  tx: SqlQueryable,
  t: ChunkTable,
  key: string,
  bytes: ArchiveBytes,
  chunkBytes = CHUNK_BYTES,
): Promise<number> {
  let n = 0;
  for (const piece of archivePieces(bytes, chunkBytes)) {
    const text = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).toString('base64');
    await tx.query(`INSERT INTO ${t.table} (${t.key}, n, bytes) VALUES ($1, $2, decode($3, 'base64'))`, [key, n++, text]);
  }
  return n;
}

/** The number of pieces `writeChunks` makes of `size` bytes. */
export function chunkCount(size: number, chunkBytes = CHUNK_BYTES): number {
  return Math.ceil(size / chunkBytes);
}

/**
 * Reads the `chunks` pieces of `key` one row at a time into one buffer of
 * `size` bytes; undefined when a piece is missing or they do not add up to
 * `size` (the value was damaged or changed behind the host's back).
 */
export async function readChunks(db: SqlQueryable, t: ChunkTable, key: string, chunks: number, size: number): Promise<Buffer | undefined> {
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (let n = 0; n < chunks; n++) {
    const rows = await db.query<{ bytes: string }>(
      `SELECT encode(bytes, 'base64') AS bytes FROM ${t.table} WHERE ${t.key} = $1 AND n = $2`,
      [key, n],
    );
    if (!rows[0]) return undefined;
    const piece = Buffer.from(rows[0].bytes, 'base64');
    if (at + piece.byteLength > size) return undefined;
    piece.copy(out, at);
    at += piece.byteLength;
  }
  return at === size ? out : undefined;
}

/** A value stored whole in one bytea column (before the pieces), read as base64 text for the same reason. */
export async function readWhole(
  db: SqlQueryable,
  table: string,
  column: string,
  key: ChunkTable['key'],
  value: string,
): Promise<Buffer | undefined> {
  const rows = await db.query<{ bytes: string | null }>(`SELECT encode(${column}, 'base64') AS bytes FROM ${table} WHERE ${key} = $1`, [
    value,
  ]);
  return rows[0] ? Buffer.from(rows[0].bytes ?? '', 'base64') : undefined;
}
