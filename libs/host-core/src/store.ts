import type { PluginRecord } from './records';

/**
 * Computes the next version of a record from the stored one, or returns
 * `undefined` to leave it as it is. It must not have side effects and must
 * not change `pluginId`: a store may call it more than once, each time with a
 * newer record, when another write got in first.
 */
export type RecordChange = (current: PluginRecord) => PluginRecord | undefined;

/**
 * The plugin registry: one record per pluginId, plus key-value host state.
 *
 * Whoever writes a record that depends on the stored one uses `update` (or
 * `putIfAbsent` for a new id), never `get` followed by `put`: a write that
 * lands between the two would be lost. The embedded default keeps everything
 * in one JSON file written atomically and serialises its writes; a PostgreSQL
 * table satisfies the same contract with one row per plugin and a version
 * column (docs/operator/storage.md). `describeRegistryStoreContract` in
 * `@host/host-store/testing` checks an implementation.
 */
export interface RegistryStore {
  /** Every record, ordered by pluginId. */
  list(): Promise<PluginRecord[]>;
  get(pluginId: string): Promise<PluginRecord | undefined>;
  /**
   * Stores `record` if no record has its pluginId. Returns the record that
   * already has the id (and writes nothing), or `undefined` when `record` was
   * stored. Of concurrent calls for one id exactly one stores its record.
   */
  putIfAbsent(record: PluginRecord): Promise<PluginRecord | undefined>;
  /**
   * Replaces the record of `pluginId` by `change(current)` atomically: no
   * write between the read and the write is lost. Returns the record stored
   * afterwards, or `undefined` when there is none (then `change` is not
   * called and nothing is created).
   */
  update(pluginId: string, change: RecordChange): Promise<PluginRecord | undefined>;
  /**
   * Inserts or replaces the record of `record.pluginId` without looking at the
   * stored one: for writes that are right whatever is stored (completing an
   * interrupted install from its journal).
   */
  put(record: PluginRecord): Promise<void>;
  /** Removes the record; nothing happens when there is none. */
  delete(pluginId: string): Promise<void>;
  /** Key-value host state (admin token hash, ...). */
  getMeta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string): Promise<void>;
  /**
   * Stores `value` under `key` unless a value is stored already; returns the
   * value stored afterwards (the given one, or the one that was first). Two
   * hosts starting at once on one store agree on one value this way.
   */
  setMetaIfAbsent(key: string, value: string): Promise<string>;
  /** Waits for pending writes; later writes are refused. */
  close(): Promise<void>;
}
