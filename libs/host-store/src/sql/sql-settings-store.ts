import type { SettingsStore, SettingsValues } from '@host/host-core';
import { announce } from './changes';
import type { SqlDatabase } from './database';
import type { SecretBox } from './secret-box';

const MAX_ATTEMPTS = 64;

/**
 * Plugin settings in SQL: one row per plugin, its values sealed with the host
 * key (settings hold secrets), with a version for optimistic updates like the
 * registry's.
 */
export class SqlSettingsStore implements SettingsStore {
  constructor(
    private readonly db: SqlDatabase,
    private readonly box: SecretBox,
  ) {}

  async get(pluginId: string): Promise<SettingsValues> {
    return (await this.read(pluginId))?.values ?? {};
  }

  async update(pluginId: string, change: (current: SettingsValues) => SettingsValues): Promise<SettingsValues> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current = await this.read(pluginId);
      const next = change(structuredClone(current?.values ?? {}));
      const sealed = this.box.seal(JSON.stringify(next));
      const written = await this.db.transaction(async (tx) => {
        const done = current
          ? await tx.query(
              'UPDATE host_plugin_settings SET sealed = $2, version = version + 1 WHERE plugin_id = $1 AND version = $3 RETURNING plugin_id',
              [pluginId, sealed, current.version],
            )
          : await tx.query(
              'INSERT INTO host_plugin_settings (plugin_id, sealed) VALUES ($1, $2) ON CONFLICT (plugin_id) DO NOTHING RETURNING plugin_id',
              [pluginId, sealed],
            );
        if (done.length) await announce(tx, { kind: 'settings', pluginId });
        return done.length > 0;
      });
      if (written) return next;
    }
    throw new Error(`The settings of ${pluginId} changed ${MAX_ATTEMPTS} times while one change was being saved; try again.`);
  }

  async delete(pluginId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      const gone = await tx.query('DELETE FROM host_plugin_settings WHERE plugin_id = $1 RETURNING plugin_id', [pluginId]);
      if (gone.length) await announce(tx, { kind: 'settings', pluginId });
    });
  }

  private async read(pluginId: string): Promise<{ values: SettingsValues; version: string } | undefined> {
    const rows = await this.db.query<{ sealed: string; version: string }>(
      'SELECT sealed, version FROM host_plugin_settings WHERE plugin_id = $1',
      [pluginId],
    );
    if (!rows[0]) return undefined;
    const values = JSON.parse(this.box.open(rows[0].sealed, `The settings of ${pluginId}`)) as SettingsValues;
    return { values, version: rows[0].version };
  }
}
