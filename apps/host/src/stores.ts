import type {
  AdminSessionStore,
  EventInbox,
  EventLogQuery,
  EventLogStore,
  EventRecord,
  HostPaths,
  PendingUpdateStore,
  RegistryStore,
  ReplayStore,
  SettingsStore,
  StoreAvailability,
} from '@host/host-core';
import {
  FileEventLogStore,
  FilePendingUpdateStore,
  FileReplayStore,
  FileSettingsStore,
  JsonRegistryStore,
  openSqlStores,
  SqlAdminSessionStore,
  type FileImportSummary,
  type PackageArchiveStore,
  type SqlEventInbox,
  type StoreChange,
} from '@host/host-store';
import { SqlDeliveryQueue, SqlLeases } from '@host/host-cluster';
import { join } from 'node:path';

/**
 * Values of HOST_STORE. `sql` (the default) keeps everything in one SQL
 * database: embedded (PostgreSQL in-process, in `<data>/state/db`) or the
 * PostgreSQL server of HOST_DATABASE_URL; `file` keeps it as files in the data
 * directory. See docs/operator/storage.md for the choice.
 */
export const STORE_KINDS = ['file', 'sql'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];
export const DEFAULT_STORE: StoreKind = 'sql';

/** Everything the host keeps outside plugin packages, logs and the install journal. */
export interface HostStores {
  kind: StoreKind;
  /** Whether other hosts may share these stores (a PostgreSQL server), so their changes must be watched. */
  shared: boolean;
  /** Where the stores are, for the start-up log (never a password). */
  description: string;
  registry: RegistryStore;
  settings: SettingsStore;
  pendingUpdates: PendingUpdateStore;
  /** The newest events with their deliveries and outbound messages (bounded). */
  events: EventLogStore;
  /** The event log of every host sharing the store, newest first (a PostgreSQL server); absent when this host is alone. */
  sharedEvents?: (query: EventLogQuery) => Promise<EventRecord[]>;
  /** Package archives by SHA-256, where every host sharing the store finds them; only the SQL store has them. */
  archives?: PackageArchiveStore;
  /** What signed webhooks took, so a captured request is refused after a restart (and by every replica on the database). */
  replays: ReplayStore;
  /** Admin app sessions, shared by every host on the database (SQL store); the file store keeps them in memory. */
  sessions?: AdminSessionStore;
  /** Events accepted and not yet logged final, routed again after a crash (SQL store; the file store keeps none). */
  inbox?: EventInbox;
  /** Leases and the durable delivery queue of stdio plugins (SQL store: one replica embedded, several on a server). */
  cluster?: { replica: string; leases: SqlLeases; queue: SqlDeliveryQueue; inbox: SqlEventInbox };
  /** What this start imported from the file store's files (SQL store, first start on an existing data directory). */
  imported?: FileImportSummary;
  /** Whether the store's database server answers (a PostgreSQL server only; the others are never away). */
  availability?: StoreAvailability;
  /** Changes any host sharing the store makes (SQL store); answers the function that stops watching. */
  watch?(onChange: (change: StoreChange) => void): Promise<() => Promise<void>>;
  /** Waits for pending writes and closes what needs closing. */
  close(): Promise<void>;
}

export interface StoreOptions {
  /** Where a store that fails to write in the background reports it. */
  onError?: (error: Error) => void;
  /** The PostgreSQL server of the SQL store (HOST_DATABASE_URL); without it the SQL store is embedded. */
  databaseUrl?: string;
  /** The password for `databaseUrl`, read from HOST_DATABASE_PASSWORD_FILE. */
  databasePassword?: string;
  /** The key that seals secrets in the SQL store (HOST_KEY_FILE); default `<state>/host.key`. */
  hostKeyFile?: string;
  /** This host's name among the hosts sharing a database (HOST_REPLICA_NAME). */
  replica?: string;
}

/** Opens the stores HOST_STORE names. */
export async function openStores(kind: string, paths: HostPaths, options: StoreOptions = {}): Promise<HostStores> {
  switch (kind) {
    case 'file': {
      const registry = await JsonRegistryStore.open(paths.stateDir);
      let events: EventLogStore;
      let replays: FileReplayStore;
      try {
        events = await FileEventLogStore.open(join(paths.stateDir, 'events'), { onError: options.onError });
      } catch (e) {
        await registry.close();
        throw e;
      }
      try {
        replays = await FileReplayStore.open(paths.stateDir);
      } catch (e) {
        await events.close();
        await registry.close();
        throw e;
      }
      return {
        kind,
        shared: false,
        description: `files in ${paths.stateDir}`,
        registry,
        settings: new FileSettingsStore(paths),
        pendingUpdates: new FilePendingUpdateStore(join(paths.stateDir, 'pending')),
        events,
        replays,
        close: async () => {
          await replays.close();
          await events.close();
          await registry.close();
        },
      };
    }
    case 'sql': {
      const stores = await openSqlStores(paths, {
        databaseUrl: options.databaseUrl,
        databasePassword: options.databasePassword,
        hostKeyFile: options.hostKeyFile,
        replica: options.replica,
        onError: options.onError,
      });
      return {
        kind,
        shared: stores.db.kind === 'postgres',
        description: stores.description,
        registry: stores.registry,
        settings: stores.settings,
        pendingUpdates: stores.pendingUpdates,
        events: stores.events,
        archives: stores.archives,
        replays: stores.replays,
        sessions: new SqlAdminSessionStore(stores.db),
        inbox: stores.inbox,
        ...(stores.db.kind === 'postgres' ? { sharedEvents: (q: EventLogQuery) => stores.events.listShared(q) } : {}),
        // Every SQL store delivers stdio plugins' events through its durable queue: one replica on the embedded
        // database, several on a PostgreSQL server (docs/operator/storage.md, "Accepted means delivered").
        cluster: {
          replica: options.replica ?? 'host',
          leases: new SqlLeases(stores.db, options.replica ?? 'host'),
          queue: new SqlDeliveryQueue(stores.db, options.replica ?? 'host'),
          inbox: stores.inbox,
        },
        imported: stores.imported,
        ...(stores.availability ? { availability: stores.availability } : {}),
        watch: stores.watch,
        close: stores.close,
      };
    }
    default:
      throw new Error(
        `HOST_STORE is "${kind}", which is not a store this host has. Use ${STORE_KINDS.map((k) => `"${k}"`).join(' or ')}, or leave HOST_STORE unset.`,
      );
  }
}
