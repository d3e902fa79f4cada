import type { EventLogStore, HostPaths, PendingUpdateStore, RegistryStore, SettingsStore } from '@host/host-core';
import { FileEventLogStore, FilePendingUpdateStore, FileSettingsStore, JsonRegistryStore } from '@host/host-store';
import { join } from 'node:path';

/** Values of HOST_STORE. `file` keeps everything in the data directory; a shared store (PostgreSQL) would be added here. */
export const STORE_KINDS = ['file'] as const;
export type StoreKind = (typeof STORE_KINDS)[number];
export const DEFAULT_STORE: StoreKind = 'file';

/** Everything the host keeps outside plugin packages, logs and the install journal. */
export interface HostStores {
  registry: RegistryStore;
  settings: SettingsStore;
  pendingUpdates: PendingUpdateStore;
  /** The newest events with their deliveries and outbound messages (bounded). */
  events: EventLogStore;
  /** Waits for pending writes and closes what needs closing. */
  close(): Promise<void>;
}

export interface StoreOptions {
  /** Where a store that fails to write in the background reports it. */
  onError?: (error: Error) => void;
}

/** Opens the stores HOST_STORE names. */
export async function openStores(kind: string, paths: HostPaths, options: StoreOptions = {}): Promise<HostStores> {
  switch (kind) {
    case 'file': {
      const registry = await JsonRegistryStore.open(paths.stateDir);
      let events: EventLogStore;
      try {
        events = await FileEventLogStore.open(join(paths.stateDir, 'events'), { onError: options.onError });
      } catch (e) {
        await registry.close();
        throw e;
      }
      return {
        registry,
        settings: new FileSettingsStore(paths),
        pendingUpdates: new FilePendingUpdateStore(join(paths.stateDir, 'pending')),
        events,
        close: async () => {
          await events.close();
          await registry.close();
        },
      };
    }
    default:
      throw new Error(
        `HOST_STORE is "${kind}", which is not a store this host has. Use ${STORE_KINDS.map((k) => `"${k}"`).join(' or ')} (the default), or leave HOST_STORE unset.`,
      );
  }
}
