import type { HostPaths, PendingUpdateStore, StoreAvailability } from '@host/host-core';
import { PLUGIN_ID_PATTERN } from '@host/protocol';
import { existsSync, promises as fs } from 'node:fs';
import { join } from 'node:path';
import { FileEventLogStore } from '../file-event-log-store';
import { FilePendingUpdateStore } from '../file-pending-update-store';
import { FileSettingsStore } from '../file-settings-store';
import { JsonRegistryStore, REGISTRY_FILE_NAME } from '../json-registry-store';
import { watchChanges, type StoreChange } from './changes';
import { describeDatabaseUrl, EmbeddedDatabase, ServerDatabase, type SqlDatabase } from './database';
import { migrate } from './migrations';
import { FilePackageArchiveStore } from '../file-package-archive-store';
import { SqlPackageArchiveStore, type PackageArchiveStore } from './package-archive-store';
import { SqlEventInbox } from './sql-event-inbox';
import { HostKeyMismatchError, loadHostKey, type SecretBox } from './secret-box';
import { SqlEventLogStore } from './sql-event-log-store';
import { SqlPendingUpdateStore } from './sql-pending-update-store';
import { SqlReplayStore } from './sql-replay-store';
import { SqlRegistryStore } from './sql-registry-store';
import { SqlSettingsStore } from './sql-settings-store';

/** The embedded database's directory in the state directory. */
export const EMBEDDED_DATABASE_DIR = 'db';
/**
 * Where a host on the embedded database keeps package archives and the archives of pending updates, in the state
 * directory: as files, since the embedded database grows its memory with every byte it is given.
 */
export const ARCHIVES_DIR = 'archives';
export const UPDATES_DIR = 'updates';
/** The host key's file in the state directory, unless HOST_KEY_FILE names another. */
export const HOST_KEY_FILE_NAME = 'host.key';
/** Host metadata naming the key that seals the database's secrets (a fingerprint, not the key). */
export const HOST_KEY_ID_META = 'store.hostKeyId';
/** Host metadata written once the files of a data directory were imported (a JSON summary). */
export const FILE_IMPORT_META = 'store.importedFromFiles';

export interface SqlStoreOptions {
  /** A PostgreSQL server (`postgres://...`); without it the embedded database in `<state>/db` is used. */
  databaseUrl?: string;
  /** The password for `databaseUrl` when it has none (read from a file by the host, never from the environment). */
  databasePassword?: string;
  /** The host key file; default `<state>/host.key`, made on first start. */
  hostKeyFile?: string;
  /** This host's name in a cluster (kept with its events); default `host`. */
  replica?: string;
  /** Events the log keeps (default 1000). */
  eventLogCapacity?: number;
  /** Where a store that fails to write in the background reports it. */
  onError?: (error: Error) => void;
  /** An already open database (tests share one); it is not closed by `close`. */
  database?: SqlDatabase;
}

/** What a data directory's files held when they were imported. */
export interface FileImportSummary {
  at: string;
  plugins: number;
  settings: number;
  pendingUpdates: number;
  events: number;
}

export interface SqlStores {
  db: SqlDatabase;
  /** Where the database is, for the start-up log (never a password). */
  description: string;
  box: SecretBox;
  registry: SqlRegistryStore;
  settings: SqlSettingsStore;
  /** Uploaded updates waiting for confirmation: as the archives (files in `<state>/updates` beside the embedded database). */
  pendingUpdates: PendingUpdateStore;
  events: SqlEventLogStore;
  /**
   * Package archives by SHA-256: in the database on a PostgreSQL server, where every replica fetches them; as files
   * in `<state>/archives` beside the embedded database (read from the database too for archives stored there before).
   */
  archives: PackageArchiveStore;
  /** What signed webhooks took, so a replay is refused after a restart and on every replica. */
  replays: SqlReplayStore;
  /** Events this host accepted and has not logged final yet. */
  inbox: SqlEventInbox;
  /** What this start imported from the data directory's files, if it did. */
  imported: FileImportSummary | undefined;
  /** Whether the database server answers (a PostgreSQL server only: the embedded database is never away). */
  availability?: StoreAvailability;
  /** Calls `onChange` for every change any host sharing the database makes; answers the function that stops it. */
  watch(onChange: (change: StoreChange) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/**
 * Opens the SQL stores: the database (embedded or a server), its schema
 * brought up to date, the host key checked against the one that sealed the
 * database, and on the first start of a data directory that has the files of
 * the file store, those imported.
 */
export async function openSqlStores(paths: HostPaths, o: SqlStoreOptions = {}): Promise<SqlStores> {
  await fs.mkdir(paths.stateDir, { recursive: true });
  const box = await loadHostKey(o.hostKeyFile ?? join(paths.stateDir, HOST_KEY_FILE_NAME), { create: true });
  const db =
    o.database ??
    (o.databaseUrl
      ? await ServerDatabase.open(o.databaseUrl, { password: o.databasePassword })
      : await EmbeddedDatabase.open(join(paths.stateDir, EMBEDDED_DATABASE_DIR)));
  const description = o.databaseUrl
    ? `PostgreSQL server ${describeDatabaseUrl(o.databaseUrl)}`
    : `embedded database in ${join(paths.stateDir, EMBEDDED_DATABASE_DIR)}`;
  const ownsDb = !o.database;
  try {
    await migrate(db);
    const registry = new SqlRegistryStore(db, box);
    const keyId = await registry.setMetaIfAbsent(HOST_KEY_ID_META, box.keyId);
    if (keyId !== box.keyId) throw new HostKeyMismatchError('The database');
    const settings = new SqlSettingsStore(db, box);
    const sqlPendingUpdates = new SqlPendingUpdateStore(db);
    const imported = await importFiles(paths, db, registry, settings, sqlPendingUpdates, o);
    const pendingUpdates =
      db.kind === 'postgres' ? sqlPendingUpdates : new FilePendingUpdateStore(join(paths.stateDir, UPDATES_DIR), sqlPendingUpdates);
    const sqlArchives = new SqlPackageArchiveStore(db);
    const archiveFiles = new FilePackageArchiveStore(join(paths.stateDir, ARCHIVES_DIR), sqlArchives);
    // A data directory that was on the embedded database brings its archives to the server, for the other replicas.
    if (db.kind === 'postgres') await archiveFiles.copyInto(sqlArchives);
    const events = await SqlEventLogStore.open(db, { capacity: o.eventLogCapacity, replica: o.replica, onError: o.onError });
    return {
      db,
      description,
      box,
      registry,
      settings,
      pendingUpdates,
      events,
      archives: db.kind === 'postgres' ? sqlArchives : archiveFiles,
      replays: new SqlReplayStore(db),
      inbox: new SqlEventInbox(db, o.replica ?? 'host'),
      imported,
      ...(db instanceof ServerDatabase ? { availability: db } : {}),
      watch: (onChange) => watchChanges(db, onChange),
      close: async () => {
        await events.close();
        await registry.close();
        if (ownsDb) await db.close();
      },
    };
  } catch (e) {
    if (ownsDb) await db.close().catch(() => {});
    throw e;
  }
}

/**
 * Imports what the file store left in the data directory (registry, settings,
 * pending updates, event log) once per database. Each write is idempotent and
 * the marker is written last, so a start interrupted halfway imports again.
 * The files stay as they were.
 */
async function importFiles(
  paths: HostPaths,
  db: SqlDatabase,
  registry: SqlRegistryStore,
  settings: SqlSettingsStore,
  pendingUpdates: SqlPendingUpdateStore,
  o: SqlStoreOptions,
): Promise<FileImportSummary | undefined> {
  if (!existsSync(join(paths.stateDir, REGISTRY_FILE_NAME))) return undefined;
  if ((await registry.getMeta(FILE_IMPORT_META)) !== undefined) return undefined;
  const summary: FileImportSummary = { at: new Date().toISOString(), plugins: 0, settings: 0, pendingUpdates: 0, events: 0 };
  const files = await JsonRegistryStore.open(paths.stateDir);
  try {
    for (const record of await files.list()) {
      await registry.put(record);
      summary.plugins++;
    }
    for (const key of await metaKeys(paths)) {
      const value = await files.getMeta(key);
      if (value !== undefined) await registry.setMeta(key, value);
    }
  } finally {
    await files.close();
  }
  const fileSettings = new FileSettingsStore(paths);
  for (const pluginId of await listDir(join(paths.dataDir, 'plugin-data'))) {
    if (!PLUGIN_ID_PATTERN.test(pluginId) || !existsSync(join(paths.configDirOf(pluginId), 'settings.json'))) continue;
    const values = await fileSettings.get(pluginId).catch(() => ({}));
    await settings.update(pluginId, () => values);
    summary.settings++;
  }
  const pending = new FilePendingUpdateStore(join(paths.stateDir, 'pending'));
  for (const id of await pending.list()) {
    const [description, archive] = [await pending.read(id), await pending.readArchive(id)];
    if (description === undefined || archive === undefined) continue;
    await pendingUpdates.save(id, archive, description);
    summary.pendingUpdates++;
  }
  const eventsDir = join(paths.stateDir, 'events');
  if (existsSync(eventsDir)) {
    const fileEvents = await FileEventLogStore.open(eventsDir, { capacity: o.eventLogCapacity });
    const records = fileEvents.list({ limit: fileEvents.capacity }).reverse();
    await fileEvents.close();
    const sqlEvents = await SqlEventLogStore.open(db, { capacity: o.eventLogCapacity, replica: o.replica });
    for (const r of records) sqlEvents.append(r);
    await sqlEvents.close();
    summary.events = records.length;
  }
  await registry.setMeta(FILE_IMPORT_META, JSON.stringify(summary));
  return summary;
}

/** The metadata keys of the registry file (the store contract has no listing of them). */
async function metaKeys(paths: HostPaths): Promise<string[]> {
  const raw = JSON.parse(await fs.readFile(join(paths.stateDir, REGISTRY_FILE_NAME), 'utf8')) as { meta?: Record<string, string> };
  return Object.keys(raw.meta ?? {});
}

async function listDir(dir: string): Promise<string[]> {
  return fs.readdir(dir).catch(() => []);
}
