import { archiveSize, type ArchiveBytes, type PendingUpdateStore } from '@host/host-core';
import { chunkCount, readChunks, readWhole, writeChunks, type ChunkTable } from './chunked-bytes';
import type { SqlDatabase } from './database';

const PENDING_CHUNKS: ChunkTable = { table: 'host_pending_update_chunks', key: 'id' };

/**
 * Uploaded updates waiting for confirmation, as rows: the description, and the
 * archive in 1 MiB pieces in host_pending_update_chunks (see chunked-bytes.ts),
 * written in one transaction with the row, so one row is both or neither.
 * Rows saved before the pieces hold the archive in their own `archive` column.
 */
export class SqlPendingUpdateStore implements PendingUpdateStore {
  constructor(private readonly db: SqlDatabase) {}

  async save(id: string, archive: ArchiveBytes, description: unknown): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO host_pending_updates (id, archive, size, chunks, description) VALUES ($1, NULL, $2, $3, $4)
         ON CONFLICT (id) DO UPDATE SET archive = NULL, size = EXCLUDED.size, chunks = EXCLUDED.chunks,
           description = EXCLUDED.description, saved_at = now()`,
        [id, archiveSize(archive), chunkCount(archiveSize(archive)), JSON.stringify(description)],
      );
      await tx.query('DELETE FROM host_pending_update_chunks WHERE id = $1', [id]);
      await writeChunks(tx, PENDING_CHUNKS, id, archive);
    });
  }

  async read(id: string): Promise<unknown> {
    const rows = await this.db.query<{ description: unknown }>('SELECT description FROM host_pending_updates WHERE id = $1', [id]);
    return rows[0]?.description;
  }

  async readArchive(id: string): Promise<Uint8Array | undefined> {
    const rows = await this.db.query<{ size: string | number | null; chunks: number | null }>(
      'SELECT size, chunks FROM host_pending_updates WHERE id = $1',
      [id],
    );
    const row = rows[0];
    if (!row) return undefined;
    // A damaged archive is caught by the SHA-256 check of its confirmation.
    const bytes =
      row.chunks === null
        ? await readWhole(this.db, 'host_pending_updates', 'archive', 'id', id)
        : await readChunks(this.db, PENDING_CHUNKS, id, row.chunks, Number(row.size));
    return bytes === undefined ? new Uint8Array(0) : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  async delete(id: string): Promise<void> {
    await this.db.query('DELETE FROM host_pending_updates WHERE id = $1', [id]);
  }

  async list(): Promise<string[]> {
    return (await this.db.query<{ id: string }>('SELECT id FROM host_pending_updates ORDER BY saved_at, id')).map((r) => r.id);
  }
}
