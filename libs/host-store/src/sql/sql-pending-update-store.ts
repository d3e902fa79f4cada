import type { PendingUpdateStore } from '@host/host-core';
import type { SqlDatabase } from './database';

/** Uploaded updates waiting for confirmation, as rows: the archive as bytes beside its description. One row is both or neither. */
export class SqlPendingUpdateStore implements PendingUpdateStore {
  constructor(private readonly db: SqlDatabase) {}

  async save(id: string, archive: Uint8Array, description: unknown): Promise<void> {
    await this.db.query(
      `INSERT INTO host_pending_updates (id, archive, description) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET archive = EXCLUDED.archive, description = EXCLUDED.description, saved_at = now()`,
      [id, archive, JSON.stringify(description)],
    );
  }

  async read(id: string): Promise<unknown> {
    const rows = await this.db.query<{ description: unknown }>('SELECT description FROM host_pending_updates WHERE id = $1', [id]);
    return rows[0]?.description;
  }

  async readArchive(id: string): Promise<Uint8Array | undefined> {
    const rows = await this.db.query<{ archive: Uint8Array }>('SELECT archive FROM host_pending_updates WHERE id = $1', [id]);
    return rows[0] ? new Uint8Array(rows[0].archive) : undefined;
  }

  async delete(id: string): Promise<void> {
    await this.db.query('DELETE FROM host_pending_updates WHERE id = $1', [id]);
  }

  async list(): Promise<string[]> {
    return (await this.db.query<{ id: string }>('SELECT id FROM host_pending_updates ORDER BY saved_at, id')).map((r) => r.id);
  }
}
