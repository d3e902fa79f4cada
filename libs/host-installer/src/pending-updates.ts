import { HostError, type ArchiveBytes, type PendingUpdateStore } from '@host/host-core';
import { randomUUID } from 'node:crypto';
import { bufferSource, openFileSource, type ArchiveSource } from './archive-source';

// The shape is the admin API's: the answer to an upload that needs confirmation.
import { PendingUpdateSchema, type PendingUpdate } from '@host/admin-api';
export type { PendingUpdate };

const ID = /^[0-9a-f-]{36}$/;

/**
 * Pending updates kept per plugin. Each holds a whole archive on disk; an
 * upload beyond this replaces the oldest (whose id then answers
 * PENDING_UPDATE_NOT_FOUND), so repeated uploads of one plugin cannot fill the disk.
 */
export const MAX_PENDING_UPDATES_PER_PLUGIN = 3;

/**
 * Pending updates kept across all plugins: uploads for many plugin ids
 * cannot fill the disk either; beyond it the oldest of any plugin is replaced.
 */
export const MAX_PENDING_UPDATES = 20;

/**
 * Uploaded updates waiting for the operator's confirmation: ids, expiry and
 * the archive's integrity are decided here; the bytes and the description go
 * to a `PendingUpdateStore` (by default files in `<state>/pending/`).
 */
export class PendingUpdates {
  /** Creation order in this process, for updates created within the same millisecond. */
  private readonly created = new Map<string, number>();

  constructor(
    private readonly store: PendingUpdateStore,
    private readonly now: () => number = Date.now,
  ) {}

  async create(
    archive: ArchiveBytes,
    details: Omit<PendingUpdate, 'id' | 'createdAt' | 'expiresAt'>,
    ttlMs: number,
  ): Promise<PendingUpdate> {
    const id = randomUUID();
    const now = this.now();
    const pending: PendingUpdate = {
      id,
      ...details,
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + ttlMs).toISOString(),
    };
    await this.store.save(id, archive, pending);
    this.created.set(id, this.created.size);
    return pending;
  }

  /** The pending update, or PENDING_UPDATE_NOT_FOUND when unknown or expired. */
  async get(id: string): Promise<PendingUpdate> {
    const notFound = () => new HostError('PENDING_UPDATE_NOT_FOUND', undefined, { id });
    if (!ID.test(id)) throw notFound();
    const parsed = PendingUpdateSchema.safeParse(await this.store.read(id));
    if (!parsed.success || parsed.data.id !== id) throw notFound();
    if (Date.parse(parsed.data.expiresAt) <= this.now()) {
      await this.delete(id);
      throw notFound();
    }
    return parsed.data;
  }

  /**
   * Opens the archive and checks it is still the one the update was prepared from: read in ranges from its file
   * when the store keeps one, else from its bytes. The caller closes it.
   */
  async archive(pending: PendingUpdate): Promise<ArchiveSource> {
    const file = await this.store.archiveFile?.(pending.id);
    const bytes = file ? undefined : await this.store.readArchive(pending.id);
    const source = file ? openFileSource(file) : bytes && bufferSource(bytes);
    if (!source || source.sha256() !== pending.sha256) {
      source?.close();
      await this.delete(pending.id);
      throw new HostError(
        'PENDING_UPDATE_STALE',
        'The stored archive of this pending update is missing or changed. Upload the package again.',
        {
          id: pending.id,
        },
      );
    }
    return source;
  }

  delete(id: string): Promise<void> {
    this.created.delete(id);
    return this.store.delete(id);
  }

  /** Every pending update that has not expired. */
  async list(): Promise<PendingUpdate[]> {
    const out: PendingUpdate[] = [];
    for (const id of await this.store.list()) {
      try {
        out.push(await this.get(id));
      } catch {
        // expired (get() removed it) or unreadable (sweep() removes it)
      }
    }
    return out;
  }

  /** Deletes the oldest pending updates of `pluginId` until at most `keep` are left. */
  /**
   * Makes room before a new pending update of `pluginId`: removes the oldest
   * ones so at most `keep` of that plugin and `keepTotal` of all plugins remain.
   */
  async trim(pluginId: string, keep: number, keepTotal: number): Promise<void> {
    const all = (await this.list()).sort(
      (a, b) => a.createdAt.localeCompare(b.createdAt) || (this.created.get(a.id) ?? -1) - (this.created.get(b.id) ?? -1),
    );
    const mine = all.filter((p) => p.pluginId === pluginId);
    const gone = new Set(mine.slice(0, Math.max(0, mine.length - keep)).map((p) => p.id));
    const rest = all.filter((p) => !gone.has(p.id));
    for (const p of rest.slice(0, Math.max(0, rest.length - keepTotal))) gone.add(p.id);
    for (const id of gone) await this.delete(id);
  }

  /** Removes expired and unreadable updates. */
  async sweep(): Promise<void> {
    const live = new Set((await this.list()).map((p) => p.id));
    for (const id of await this.store.list()) if (!live.has(id)) await this.store.delete(id);
  }
}
