import { SerialQueue, type PluginRecord, type RecordChange, type RegistryStore } from '@host/host-core';
import { announce } from './changes';
import type { SqlDatabase } from './database';
import type { SecretBox } from './secret-box';

interface Row {
  record: PluginRecord;
  version: string;
}

/** Concurrent writers of one record each try again this often before giving up. */
const MAX_ATTEMPTS = 64;

/**
 * The registry in SQL: one row per plugin with a version number, and host
 * metadata as key-value rows. `update` is an optimistic write: read the row
 * and its version, compute the change in the host, write only if the version
 * is still the one read, else read again and call the change again. So hosts
 * sharing the database lose no write of each other.
 *
 * HTTP plugins' signing secrets are sealed with the host key before they are
 * stored. Every write announces itself on the change channel.
 */
export class SqlRegistryStore implements RegistryStore {
  private closed = false;
  /** This host's writes go one after another, in the order they were made (as with the file store); other hosts' interleave safely. */
  private readonly writes = new SerialQueue();

  constructor(
    private readonly db: SqlDatabase,
    private readonly box: SecretBox,
  ) {}

  async list(): Promise<PluginRecord[]> {
    const rows = await this.db.query<Row>('SELECT record FROM host_plugins ORDER BY plugin_id COLLATE "C"');
    return rows.map((r) => this.unseal(r.record));
  }

  async get(pluginId: string): Promise<PluginRecord | undefined> {
    const rows = await this.db.query<Row>('SELECT record FROM host_plugins WHERE plugin_id = $1', [pluginId]);
    return rows[0] ? this.unseal(rows[0].record) : undefined;
  }

  putIfAbsent(record: PluginRecord): Promise<PluginRecord | undefined> {
    const sealed = this.seal(record);
    return this.write(() =>
      this.db.transaction(async (tx) => {
        const inserted = await tx.query(
          'INSERT INTO host_plugins (plugin_id, transport, record) VALUES ($1, $2, $3) ON CONFLICT (plugin_id) DO NOTHING RETURNING plugin_id',
          [record.pluginId, record.transport, JSON.stringify(sealed)],
        );
        if (inserted.length) {
          await announce(tx, { kind: 'plugin', pluginId: record.pluginId });
          return undefined;
        }
        const rows = await tx.query<Row>('SELECT record FROM host_plugins WHERE plugin_id = $1', [record.pluginId]);
        return rows[0] ? this.unseal(rows[0].record) : undefined;
      }),
    );
  }

  update(pluginId: string, change: RecordChange): Promise<PluginRecord | undefined> {
    return this.write(async () => {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const rows = await this.db.query<Row>('SELECT record, version FROM host_plugins WHERE plugin_id = $1', [pluginId]);
        if (!rows[0]) return undefined;
        const current = this.unseal(rows[0].record);
        const next = change(structuredClone(current));
        if (next === undefined) return current;
        if (next.pluginId !== pluginId) {
          throw new Error(`A registry update of ${pluginId} returned a record of ${next.pluginId}; an update must keep the pluginId.`);
        }
        const written = await this.db.transaction(async (tx) => {
          const done = await tx.query(
            'UPDATE host_plugins SET record = $2, transport = $3, version = version + 1, updated_at = now() WHERE plugin_id = $1 AND version = $4 RETURNING plugin_id',
            [pluginId, JSON.stringify(this.seal(next)), next.transport, rows[0]!.version],
          );
          if (done.length) await announce(tx, { kind: 'plugin', pluginId });
          return done.length > 0;
        });
        if (written) return structuredClone(next);
      }
      throw new Error(`The registry record of ${pluginId} changed ${MAX_ATTEMPTS} times while one update was being made; try again.`);
    });
  }

  put(record: PluginRecord): Promise<void> {
    const sealed = this.seal(record);
    return this.write(() =>
      this.db.transaction(async (tx) => {
        await tx.query(
          `INSERT INTO host_plugins (plugin_id, transport, record) VALUES ($1, $2, $3)
           ON CONFLICT (plugin_id) DO UPDATE SET record = EXCLUDED.record, transport = EXCLUDED.transport,
             version = host_plugins.version + 1, updated_at = now()`,
          [record.pluginId, record.transport, JSON.stringify(sealed)],
        );
        await announce(tx, { kind: 'plugin', pluginId: record.pluginId });
      }),
    );
  }

  delete(pluginId: string): Promise<void> {
    return this.write(() =>
      this.db.transaction(async (tx) => {
        const gone = await tx.query('DELETE FROM host_plugins WHERE plugin_id = $1 RETURNING plugin_id', [pluginId]);
        if (gone.length) await announce(tx, { kind: 'plugin', pluginId });
      }),
    );
  }

  async getMeta(key: string): Promise<string | undefined> {
    const rows = await this.db.query<{ value: string }>('SELECT value FROM host_meta WHERE key = $1', [key]);
    return rows[0]?.value;
  }

  setMeta(key: string, value: string): Promise<void> {
    return this.write(() =>
      this.db.transaction(async (tx) => {
        await tx.query('INSERT INTO host_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value', [
          key,
          value,
        ]);
        await announce(tx, { kind: 'meta', key });
      }),
    );
  }

  setMetaIfAbsent(key: string, value: string): Promise<string> {
    return this.write(() =>
      this.db.transaction(async (tx) => {
        const inserted = await tx.query('INSERT INTO host_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING RETURNING key', [
          key,
          value,
        ]);
        if (inserted.length) {
          await announce(tx, { kind: 'meta', key });
          return value;
        }
        const rows = await tx.query<{ value: string }>('SELECT value FROM host_meta WHERE key = $1', [key]);
        return rows[0]!.value;
      }),
    );
  }

  /** Waits for the writes under way; later writes are refused. The database stays open (its owner closes it). */
  async close(): Promise<void> {
    this.closed = true;
    await this.writes.idle();
  }

  private write<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('The registry store is closed; this write was not made.'));
    return this.writes.run(work);
  }

  private seal(record: PluginRecord): PluginRecord {
    const copy = structuredClone(record);
    if (copy.transport === 'http') copy.signingSecret = this.box.seal(copy.signingSecret);
    return copy;
  }

  private unseal(record: PluginRecord): PluginRecord {
    if (record.transport === 'http') record.signingSecret = this.box.open(record.signingSecret, `The signing secret of ${record.pluginId}`);
    return record;
  }
}
