import { KeyedLock, type HostPaths, type SettingsStore, type SettingsValues } from '@host/host-core';
import { PLUGIN_ID_PATTERN } from '@host/protocol';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { readJsonFile, writeJsonAtomic } from '@host/host-fs';

/** Settings live in the plugin's config dir, outside its package: updates and uninstall keep them. */
export function settingsFile(paths: HostPaths, pluginId: string): string {
  // The id becomes a path: only well-formed ids reach the file system.
  if (!PLUGIN_ID_PATTERN.test(pluginId)) throw new Error(`"${pluginId}" is not a valid pluginId, so it has no settings file.`);
  return join(paths.configDirOf(pluginId), 'settings.json');
}

/**
 * The embedded settings store: `plugin-data/<pluginId>/config/settings.json`
 * (`{"values": {...}}`, mode 0600 since it holds secrets), written atomically.
 * Changes of one plugin are serialised, so concurrent saves lose nothing.
 */
export class FileSettingsStore implements SettingsStore {
  private readonly writes = new KeyedLock();

  constructor(private readonly paths: HostPaths) {}

  async get(pluginId: string): Promise<SettingsValues> {
    // A missing or unreadable file means nothing is set; the next save rewrites it.
    const raw = (await readJsonFile(settingsFile(this.paths, pluginId)).catch(() => undefined)) as { values?: SettingsValues } | undefined;
    return raw?.values && typeof raw.values === 'object' ? raw.values : {};
  }

  update(pluginId: string, change: (current: SettingsValues) => SettingsValues): Promise<SettingsValues> {
    return this.writes.run(pluginId, async () => {
      const next = change(await this.get(pluginId));
      await fs.mkdir(this.paths.configDirOf(pluginId), { recursive: true });
      await writeJsonAtomic(settingsFile(this.paths, pluginId), { values: next }, { mode: 0o600 });
      return next;
    });
  }

  delete(pluginId: string): Promise<void> {
    return this.writes.run(pluginId, () => fs.rm(settingsFile(this.paths, pluginId), { force: true }));
  }
}
