import type { PluginRecord } from './records';

/**
 * The plugin registry. The embedded default keeps it in one JSON file written
 * atomically; the interface is small enough that a PostgreSQL table backs it
 * the same way (one row per plugin, upsert by pluginId).
 */
export interface RegistryStore {
  list(): Promise<PluginRecord[]>;
  get(pluginId: string): Promise<PluginRecord | undefined>;
  /** Inserts or replaces the record of `record.pluginId`. */
  put(record: PluginRecord): Promise<void>;
  delete(pluginId: string): Promise<void>;
  /** Key-value host state (admin token hash, ...). */
  getMeta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string): Promise<void>;
  close(): Promise<void>;
}
