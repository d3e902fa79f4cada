import { SerialQueue, type PluginRecord, type RecordChange, type RegistryStore } from '@host/host-core';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { isAtomicTempName, readJsonFile, writeJsonAtomic } from '@host/host-fs';

/** On-disk shape of the registry file. */
interface RegistryFile {
  formatVersion: 1;
  plugins: Record<string, PluginRecord>;
  meta: Record<string, string>;
}

export const REGISTRY_FILE_NAME = 'registry.json';

/** The registry file is unreadable; the host refuses to start rather than lose plugins. */
export class RegistryCorruptError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(
      `The plugin registry ${file} cannot be read (${reason}). Restore it from a backup of the data directory, ` +
        'or move it away to start with an empty registry (installed packages are then re-discovered from plugins-v2/).',
    );
    this.name = 'RegistryCorruptError';
  }
}

function parseRegistry(file: string, raw: unknown): RegistryFile {
  const r = raw as Partial<RegistryFile> | null;
  if (!r || typeof r !== 'object' || r.formatVersion !== 1 || typeof r.plugins !== 'object' || typeof r.meta !== 'object') {
    throw new RegistryCorruptError(file, 'not a registry of format version 1');
  }
  for (const [id, rec] of Object.entries(r.plugins ?? {})) {
    if (!rec || rec.pluginId !== id || (rec.transport !== 'stdio-jsonrpc' && rec.transport !== 'http')) {
      throw new RegistryCorruptError(file, `entry "${id}" is malformed`);
    }
  }
  return { formatVersion: 1, plugins: { ...r.plugins }, meta: { ...r.meta } };
}

/**
 * The embedded registry: one JSON file in the state directory, held in memory
 * and rewritten atomically on every change. A crash leaves the previous or the
 * next version of the file, never a torn one. Writes are serialised and each
 * one reads the state the previous one left, so `update` and `putIfAbsent`
 * are atomic: concurrent writers never lose each other's changes.
 *
 * Suited to one host process per data directory (see `acquireDataDirLock`);
 * several hosts sharing one registry need the PostgreSQL mapping described in
 * docs/operator/storage.md.
 */
export class JsonRegistryStore implements RegistryStore {
  private readonly writes = new SerialQueue();
  private closed = false;

  private constructor(
    readonly file: string,
    private data: RegistryFile,
  ) {}

  /** Opens (or creates on first write) `<stateDir>/registry.json`. */
  static async open(stateDir: string): Promise<JsonRegistryStore> {
    await fs.mkdir(stateDir, { recursive: true });
    // Temporary files of writes interrupted by a crash are garbage.
    for (const name of await fs.readdir(stateDir)) {
      if (name.startsWith(`.${REGISTRY_FILE_NAME}.`) && isAtomicTempName(name)) await fs.rm(join(stateDir, name), { force: true });
    }
    const file = join(stateDir, REGISTRY_FILE_NAME);
    let raw: unknown;
    try {
      raw = await readJsonFile(file);
    } catch (e) {
      throw new RegistryCorruptError(file, (e as Error).message);
    }
    const data = raw === undefined ? { formatVersion: 1 as const, plugins: {}, meta: {} } : parseRegistry(file, raw);
    return new JsonRegistryStore(file, data);
  }

  async list(): Promise<PluginRecord[]> {
    return Object.values(this.data.plugins)
      .sort((a, b) => a.pluginId.localeCompare(b.pluginId))
      .map((r) => structuredClone(r));
  }

  async get(pluginId: string): Promise<PluginRecord | undefined> {
    const r = ownRecord(this.data, pluginId);
    return r ? structuredClone(r) : undefined;
  }

  putIfAbsent(record: PluginRecord): Promise<PluginRecord | undefined> {
    const copy = structuredClone(record);
    return this.mutate((d) => {
      const existing = ownRecord(d, copy.pluginId);
      if (existing) return { result: structuredClone(existing), write: false };
      d.plugins[copy.pluginId] = copy;
      return { result: undefined, write: true };
    });
  }

  update(pluginId: string, change: RecordChange): Promise<PluginRecord | undefined> {
    return this.mutate((d) => {
      const current = ownRecord(d, pluginId);
      if (!current) return { result: undefined, write: false };
      const next = change(structuredClone(current));
      if (next === undefined) return { result: structuredClone(current), write: false };
      if (next.pluginId !== pluginId) {
        throw new Error(`A registry update of ${pluginId} returned a record of ${next.pluginId}; an update must keep the pluginId.`);
      }
      d.plugins[pluginId] = structuredClone(next);
      return { result: structuredClone(next), write: true };
    });
  }

  put(record: PluginRecord): Promise<void> {
    const copy = structuredClone(record);
    return this.mutate((d) => {
      d.plugins[copy.pluginId] = copy;
      return { result: undefined, write: true };
    });
  }

  delete(pluginId: string): Promise<void> {
    return this.mutate((d) => {
      if (!ownRecord(d, pluginId)) return { result: undefined, write: false };
      delete d.plugins[pluginId];
      return { result: undefined, write: true };
    });
  }

  async getMeta(key: string): Promise<string | undefined> {
    return Object.hasOwn(this.data.meta, key) ? this.data.meta[key] : undefined;
  }

  setMeta(key: string, value: string): Promise<void> {
    return this.mutate((d) => {
      d.meta[key] = value;
      return { result: undefined, write: true };
    });
  }

  setMetaIfAbsent(key: string, value: string): Promise<string> {
    return this.mutate((d) => {
      if (Object.hasOwn(d.meta, key)) return { result: d.meta[key]!, write: false };
      d.meta[key] = value;
      return { result: value, write: true };
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.writes.idle();
  }

  /**
   * Applies `change` to a copy of the state the previous write left, writes
   * the copy, and only then makes it the state seen by readers: a failed write
   * (or a change that throws) changes nothing. A change that writes nothing
   * skips the file.
   */
  private mutate<T>(change: (d: RegistryFile) => { result: T; write: boolean }): Promise<T> {
    if (this.closed) return Promise.reject(new Error('The registry store is closed; this write was not made.'));
    return this.writes.run(async () => {
      const next = structuredClone(this.data);
      const { result, write } = change(next);
      if (write) {
        await writeJsonAtomic(this.file, next, { mode: 0o600 });
        this.data = next;
      }
      return result;
    });
  }
}

/** Own keys only: "__proto__" or "constructor" from a request URL must not find Object's members. */
function ownRecord(d: RegistryFile, pluginId: string): PluginRecord | undefined {
  return Object.hasOwn(d.plugins, pluginId) ? d.plugins[pluginId] : undefined;
}
