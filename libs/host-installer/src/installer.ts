import {
  HostError,
  SerialQueue,
  KeyedLock,
  type HostPaths,
  type InvalidPackage,
  type PendingUpdateStore,
  type PluginLock,
  type PluginRuntime,
  type RegistryStore,
  type StdioPluginRecord,
} from '@host/host-core';
import { PLUGIN_ID_PATTERN } from '@host/protocol';
import type { PackageArchiveStore } from '@host/host-store';
import { fsyncDir, writeFileAtomic } from '@host/host-fs';
import { promises as fs } from 'node:fs';
import { dirname, join } from 'node:path';
import { openPackage, type ArchiveSource, type PackageInput } from './archive-source';
import { listBackups, newBackupPath, pruneBackups, type BackupInfo } from './backups';
import { discoverPackages } from './discovery';
import { extractEntries } from './extract';
import { inspectPackage, type PackagePlan } from './inspect';
import { clearJournal, writeJournal } from './journal';
import { DEFAULT_INSTALL_LIMITS, PENDING_UPDATE_TTL_MS, type InstallLimits } from './limits';
import { MAX_PENDING_UPDATES, MAX_PENDING_UPDATES_PER_PLUGIN, PendingUpdates, type PendingUpdate } from './pending-updates';
import { diffPackages, summarize } from './update-diff';
import { exists, PackageSwap, type InstallStep, type SwapRecovery } from './package-swap';

export type { InstallStep } from './package-swap';

export interface InstallerOptions {
  paths: HostPaths;
  store: RegistryStore;
  runtime: PluginRuntime;
  /**
   * The host-wide lock per plugin id. Pass the one the HTTP registry and the
   * admin API use, so an upload and an HTTP registration of one id, or an
   * update and a start, never interleave. Default: a lock of this installer's own.
   */
  locks?: PluginLock;
  /**
   * Package archives by SHA-256 where every host sharing the store finds them
   * (the SQL store). Every installed or updated archive is kept there before
   * its record names it, and `syncPackage` unpacks it on the other hosts.
   */
  archives?: PackageArchiveStore;
  /**
   * Where uploaded updates wait for confirmation, which the composition root chooses with the other stores
   * (files in `<state>/pending/`, or the SQL store).
   */
  pendingUpdates: PendingUpdateStore;
  limits?: Partial<InstallLimits>;
  pendingTtlMs?: number;
  /** Pending updates kept per plugin and in all (default MAX_PENDING_UPDATES_PER_PLUGIN and MAX_PENDING_UPDATES). */
  maxPendingUpdates?: { perPlugin: number; total: number };
  now?: () => Date;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /**
   * Called after each step of a swap. Tests make it throw (a failure at that
   * point) or kill the process (a crash at that point).
   */
  onStep?: (step: InstallStep, pluginId: string) => void | Promise<void>;
}

export interface InstallResult {
  record: StdioPluginRecord;
  /** The previous version's backup folder (updates). */
  backup?: string;
  /** Whether the plugin was started after the install. */
  started: boolean;
  /** Why starting failed; the install itself succeeded. */
  startError?: { code: string; message: string };
}

export interface RecoveryReport extends SwapRecovery {
  adopted: string[];
  invalid: InvalidPackage[];
}

/**
 * Installs, updates and uninstalls stdio plugin packages under one data
 * directory. Operations run one at a time, each holding its plugin's lock
 * (`locks`) while it checks and changes the plugin. Every swap of a package folder is
 * journalled, so a crash leaves the old version or the new one, never a mix,
 * and never a registry entry without its folder.
 */
export class PluginInstaller {
  readonly limits: InstallLimits;
  readonly pending: PendingUpdates;
  /** The per-plugin lock its operations hold. */
  readonly locks: PluginLock;
  private readonly paths: HostPaths;
  private readonly now: () => Date;
  private readonly queue = new SerialQueue();
  /** The journalled swap of package folders. */
  private readonly swap: PackageSwap;
  private invalid = new Map<string, InvalidPackage>();

  constructor(private readonly opts: InstallerOptions) {
    this.paths = opts.paths;
    this.limits = { ...DEFAULT_INSTALL_LIMITS, ...opts.limits };
    this.now = opts.now ?? (() => new Date());
    this.locks = opts.locks ?? new KeyedLock();
    this.pending = new PendingUpdates(opts.pendingUpdates, () => this.now().getTime());
    this.swap = new PackageSwap({
      paths: this.paths,
      store: opts.store,
      limits: this.limits,
      now: this.now,
      log: opts.log,
      onStep: opts.onStep,
    });
  }

  /** Prepares the data directory, finishes or rolls back an interrupted swap, removes stale staging, discovers packages. */
  init(): Promise<RecoveryReport> {
    return this.exclusive(async () => {
      const p = this.paths;
      for (const dir of [p.packagesRoot, p.stagingRoot, p.stateDir]) await fs.mkdir(dir, { recursive: true });
      const journal = await this.swap.recover();
      for (const name of await fs.readdir(p.stagingRoot)) await fs.rm(join(p.stagingRoot, name), { recursive: true, force: true });
      await this.pending.sweep();
      // A crash between a swap and its pruning can leave one backup too many.
      const backupsRoot = dirname(p.backupsDir('x'));
      for (const id of await fs.readdir(backupsRoot).catch(() => [] as string[])) await pruneBackups(p.backupsDir(id));
      const { adopted } = await this.discover();
      return { ...journal, adopted, invalid: this.invalidPackages() };
    });
  }

  /** Packages on disk whose manifest does not validate (or whose folder is gone). */
  invalidPackages(): InvalidPackage[] {
    return [...this.invalid.values()];
  }

  /**
   * Installs a new plugin. When the pluginId is installed already, keeps the
   * archive as a pending update and throws UPDATE_CONFIRMATION_REQUIRED with
   * `details.pendingUpdate`. The archive is the bytes, or `{ file }`: an
   * uploaded file, read in ranges while it is checked, kept and unpacked, so
   * it is never held in memory whole (the file must stay until this ends).
   */
  async install(input: PackageInput, options: { startAfterInstall?: boolean } = {}): Promise<InstallResult> {
    const archive = openPackage(input);
    try {
      return await this.installFrom(archive, options);
    } finally {
      archive.close();
    }
  }

  private async installFrom(archive: ArchiveSource, options: { startAfterInstall?: boolean }): Promise<InstallResult> {
    const plan = inspectPackage(archive, this.limits);
    const id = plan.manifest.pluginId;
    return this.exclusiveFor(id, async () => {
      const existing = await this.opts.store.get(id);
      if (existing?.transport === 'http') {
        throw new HostError(
          'INSTALL_ID_TAKEN',
          `"${id}" is registered as an HTTP plugin. Remove that registration or choose another pluginId.`,
          {
            pluginId: id,
          },
        );
      }
      if (existing) {
        // Unpack into nothing: a bomb or a corrupt entry is refused now, not at confirmation.
        await extractEntries({ destination: null, limits: this.limits, files: plan.files });
        await this.pending.sweep();
        // Each pending update keeps a whole archive on disk: further uploads replace the oldest ones.
        const max = this.opts.maxPendingUpdates ?? { perPlugin: MAX_PENDING_UPDATES_PER_PLUGIN, total: MAX_PENDING_UPDATES };
        await this.pending.trim(id, max.perPlugin - 1, max.total - 1);
        const pendingUpdate = await this.pending.create(
          archive,
          {
            pluginId: id,
            sha256: plan.sha256,
            installed: summarize(existing.manifest, existing.packageSha256),
            incoming: summarize(plan.manifest, plan.sha256),
            changes: diffPackages(
              { manifest: existing.manifest, sha256: existing.packageSha256 },
              { manifest: plan.manifest, sha256: plan.sha256 },
            ),
          },
          this.opts.pendingTtlMs ?? PENDING_UPDATE_TTL_MS,
        );
        throw new HostError('UPDATE_CONFIRMATION_REQUIRED', undefined, { pendingUpdate });
      }
      await this.opts.archives?.put(archive);
      const result = await this.replace(plan, undefined);
      return this.startIfAsked(result, options.startAfterInstall === true);
    });
  }

  getPendingUpdate(id: string): Promise<PendingUpdate> {
    return this.pending.get(id);
  }

  async cancelUpdate(id: string): Promise<void> {
    await this.pending.get(id);
    await this.pending.delete(id);
  }

  /**
   * Applies a pending update: re-checks the archive's SHA-256 and that the
   * installed version is still the one the update was prepared against, stops
   * a running plugin, swaps the folders (restoring the backup on failure) and
   * starts it again.
   */
  confirmUpdate(id: string, options: { startAfterInstall?: boolean } = {}): Promise<InstallResult> {
    return this.exclusive(async () => {
      const pending = await this.pending.get(id);
      return this.locks.run(pending.pluginId, () => this.applyUpdate(pending, options));
    });
  }

  /** The part of `confirmUpdate` that holds the plugin's lock. */
  private async applyUpdate(pending: PendingUpdate, options: { startAfterInstall?: boolean }): Promise<InstallResult> {
    const archive = await this.pending.archive(pending);
    try {
      return await this.applyUpdateFrom(archive, pending, options);
    } finally {
      archive.close();
    }
  }

  private async applyUpdateFrom(
    archive: ArchiveSource,
    pending: PendingUpdate,
    options: { startAfterInstall?: boolean },
  ): Promise<InstallResult> {
    const id = pending.id;
    const current = await this.opts.store.get(pending.pluginId);
    if (
      !current ||
      current.transport !== 'stdio-jsonrpc' ||
      current.packageSha256 !== pending.installed.sha256 ||
      current.manifest.version !== pending.installed.version
    ) {
      await this.pending.delete(id);
      throw new HostError('PENDING_UPDATE_STALE', undefined, { id, pluginId: pending.pluginId });
    }
    const plan = inspectPackage(archive, this.limits);
    await this.opts.archives?.put(archive);
    const runtime = this.opts.runtime;
    const wasRunning = runtime.isRunning(pending.pluginId);
    if (wasRunning) {
      await runtime.stop(pending.pluginId, 'update');
      if (runtime.isRunning(pending.pluginId))
        throw new HostError('INSTALL_PLUGIN_RUNNING', 'The plugin did not stop; the update was not applied. Try again or stop it first.');
    }
    let result: InstallResult;
    try {
      result = await this.replace(plan, current);
    } catch (e) {
      if (wasRunning) await runtime.start(pending.pluginId).catch(() => undefined);
      throw e;
    }
    await this.pending.delete(id);
    return this.startIfAsked(result, wasRunning || options.startAfterInstall === true);
  }

  /** Removes the package (moved to a backup) and its registry entry; data and config stay. */
  uninstall(pluginId: string): Promise<{ backup: string | null }> {
    return this.exclusiveFor(pluginId, async () => {
      if (!PLUGIN_ID_PATTERN.test(pluginId)) throw new HostError('PLUGIN_NOT_FOUND', undefined, { pluginId });
      const record = await this.opts.store.get(pluginId);
      const pkg = this.paths.packageDir(pluginId);
      const onDisk = await exists(pkg);
      if (!record && !onDisk) throw new HostError('PLUGIN_NOT_FOUND', undefined, { pluginId });
      if (record?.transport === 'http') {
        await this.opts.store.delete(pluginId);
        return { backup: null };
      }
      if (this.opts.runtime.isRunning(pluginId)) await this.opts.runtime.stop(pluginId, 'operator');
      const backup = onDisk
        ? await newBackupPath(this.paths.backupsDir(pluginId), record?.manifest.version ?? 'unknown', this.now())
        : null;
      await writeJournal(this.paths.stateDir, {
        op: 'uninstall',
        pluginId,
        backup: backup && this.swap.rel(backup),
        startedAt: this.now().toISOString(),
      });
      if (backup) {
        await fs.rename(pkg, backup);
        await fsyncDir(this.paths.packagesRoot);
      }
      await this.opts.store.delete(pluginId);
      await clearJournal(this.paths.stateDir);
      this.invalid.delete(pluginId);
      for (const p of await this.pending.list()) if (p.pluginId === pluginId) await this.pending.delete(p.id);
      await pruneBackups(this.paths.backupsDir(pluginId));
      return { backup };
    });
  }

  /** Deletes a plugin's data, config and cache: the only action that does. */
  deleteData(pluginId: string): Promise<void> {
    return this.exclusiveFor(pluginId, async () => {
      // The id becomes a path: only well-formed ids reach the file system.
      if (!PLUGIN_ID_PATTERN.test(pluginId)) throw new HostError('PLUGIN_NOT_FOUND', undefined, { pluginId });
      const dir = join(this.paths.dataDir, 'plugin-data', pluginId);
      const record = await this.opts.store.get(pluginId);
      if (!record && !(await exists(dir))) throw new HostError('PLUGIN_NOT_FOUND', undefined, { pluginId });
      if (this.opts.runtime.isRunning(pluginId)) {
        throw new HostError('PLUGIN_STATE_CONFLICT', 'The plugin is running; stop it before deleting its data.', { pluginId });
      }
      await fs.rm(dir, { recursive: true, force: true });
    });
  }

  backups(pluginId: string): Promise<BackupInfo[]> {
    return listBackups(this.paths.backupsDir(pluginId));
  }

  /**
   * Brings this host's folder of `pluginId` in line with its registry record
   * when another host sharing the store installed, updated or uninstalled it:
   * fetches the archive the record names from `archives` (checked against its
   * SHA-256), unpacks it and swaps it in (journalled, the previous folder
   * kept as a backup), restarting the plugin if it ran here. A plugin whose
   * record is gone loses the folder this host unpacked for it (to a backup).
   * Answers what it did; `missing` when the archive is not in the store.
   */
  syncPackage(pluginId: string): Promise<'current' | 'unpacked' | 'removed' | 'missing'> {
    if (!PLUGIN_ID_PATTERN.test(pluginId)) return Promise.resolve('current');
    return this.exclusiveFor(pluginId, async () => {
      const archives = this.opts.archives;
      const record = await this.opts.store.get(pluginId);
      const local = await this.unpackedSha256(pluginId);
      if (!record || record.transport !== 'stdio-jsonrpc') {
        // Only a folder this host unpacked from the store goes: one an operator put there stays for discovery.
        if (!local || record) return 'current';
        if (this.opts.runtime.isRunning(pluginId)) await this.opts.runtime.stop(pluginId, 'operator');
        const pkg = this.paths.packageDir(pluginId);
        if (await exists(pkg)) await fs.rename(pkg, await newBackupPath(this.paths.backupsDir(pluginId), 'removed-elsewhere', this.now()));
        await fs.rm(this.unpackedMarker(pluginId), { force: true });
        return 'removed';
      }
      if (!archives || (local === record.packageSha256 && (await exists(this.paths.packageDir(pluginId))))) return 'current';
      const archive = await archives.get(record.packageSha256);
      if (!archive) return 'missing';
      const plan = inspectPackage(Buffer.from(archive), this.limits);
      if (plan.sha256 !== record.packageSha256 || plan.manifest.pluginId !== pluginId) {
        throw new Error(`The archive stored for ${pluginId} is not the package its record names; reinstall the plugin.`);
      }
      const runtime = this.opts.runtime;
      const wasRunning = runtime.isRunning(pluginId);
      if (wasRunning) await runtime.stop(pluginId, 'update');
      await this.replace(plan, (await exists(this.paths.packageDir(pluginId))) ? record : undefined, record);
      if (wasRunning)
        await runtime
          .start(pluginId)
          .catch((e: Error) => this.opts.log?.('warn', `${pluginId} did not start again after its update: ${e.message}`));
      return 'unpacked';
    });
  }

  /** `syncPackage` for every plugin the store or this host's folders name. */
  async syncPackages(): Promise<Record<string, 'current' | 'unpacked' | 'removed' | 'missing'>> {
    const ids = new Set((await this.opts.store.list()).map((r) => r.pluginId));
    for (const name of await fs.readdir(join(this.paths.stateDir, 'unpacked')).catch(() => [] as string[])) {
      if (name.endsWith('.sha256')) ids.add(name.slice(0, -'.sha256'.length));
    }
    const out: Record<string, 'current' | 'unpacked' | 'removed' | 'missing'> = {};
    for (const id of [...ids].sort()) out[id] = await this.syncPackage(id);
    return out;
  }

  private unpackedMarker(pluginId: string): string {
    return join(this.paths.stateDir, 'unpacked', `${pluginId}.sha256`);
  }

  /** The SHA-256 of the archive this host's folder of `pluginId` was unpacked from, when it knows it. */
  private async unpackedSha256(pluginId: string): Promise<string | undefined> {
    const text = await fs.readFile(this.unpackedMarker(pluginId), 'utf8').catch(() => undefined);
    return text?.trim() || undefined;
  }

  private async markUnpacked(pluginId: string, sha256: string): Promise<void> {
    await fs.mkdir(join(this.paths.stateDir, 'unpacked'), { recursive: true });
    await writeFileAtomic(this.unpackedMarker(pluginId), `${sha256}\n`, { mode: 0o600 });
  }

  /** Re-reads every package manifest; adopts valid packages that are not registered. */
  rediscover(): Promise<{ adopted: string[] }> {
    return this.exclusive(() => this.discover());
  }

  private async discover(): Promise<{ adopted: string[] }> {
    const { valid, invalid } = await discoverPackages(this.paths);
    this.invalid = new Map(invalid.map((i) => [i.pluginId, i]));
    const adopted: string[] = [];
    for (const record of await this.opts.store.list()) {
      if (record.transport !== 'stdio-jsonrpc' || valid.has(record.pluginId) || this.invalid.has(record.pluginId)) continue;
      this.invalid.set(record.pluginId, {
        pluginId: record.pluginId,
        state: 'invalidManifest',
        issues: [
          {
            code: 'manifest.field.required',
            path: '',
            message: `The package folder plugins-v2/${record.pluginId}/ is missing. Reinstall the plugin or uninstall it.`,
          },
        ],
      });
    }
    for (const [id, manifest] of valid) {
      await this.locks.run(id, async () => {
        const now = this.now().toISOString();
        // A folder this host unpacked from the package store follows the store, not the other way round:
        // when another host uninstalled or updated the plugin meanwhile, syncPackage removes or replaces
        // the folder; adopting it would bring the plugin back, and its manifest would undo the update.
        const fromStore = this.opts.archives ? await this.unpackedSha256(id) : undefined;
        if (fromStore !== undefined) {
          const current = await this.opts.store.get(id);
          if (current?.transport !== 'stdio-jsonrpc' || current.packageSha256 !== fromStore) return;
        }
        // A package copied into plugins-v2/ by hand: register it, stopped.
        const existing = await this.opts.store.putIfAbsent({
          pluginId: id,
          transport: 'stdio-jsonrpc',
          manifest,
          packageSha256: '',
          installedAt: now,
          updatedAt: now,
          enabled: false,
        });
        if (!existing) {
          adopted.push(id);
          return;
        }
        // The folder is what runs: keep the registry's copy of its manifest in step.
        await this.opts.store.update(id, (current) =>
          current.transport === 'stdio-jsonrpc' && JSON.stringify(current.manifest) !== JSON.stringify(manifest)
            ? { ...current, manifest, updatedAt: now }
            : undefined,
        );
      });
    }
    return { adopted };
  }

  /**
   * Swaps the package folder of `plan` in ({@link PackageSwap.replace}), then readies the plugin's data, config and
   * cache folders, prunes its backups and notes which archive the folder came from.
   */
  private async replace(plan: PackagePlan, previous: StdioPluginRecord | undefined, stored?: StdioPluginRecord): Promise<InstallResult> {
    const id = plan.manifest.pluginId;
    const { record, backup } = await this.swap.replace(plan, previous, stored);
    await fs.mkdir(this.paths.dataDirOf(id), { recursive: true });
    await fs.mkdir(this.paths.configDirOf(id), { recursive: true });
    await fs.mkdir(this.paths.cacheDirOf(id), { recursive: true });
    this.invalid.delete(id);
    if (backup) await pruneBackups(this.paths.backupsDir(id));
    // Only hosts with a package store follow it (syncPackage); the marker says which archive this folder came from.
    if (this.opts.archives) await this.markUnpacked(id, plan.sha256);
    return { record, started: false, ...(backup ? { backup } : {}) };
  }

  private async startIfAsked(result: InstallResult, start: boolean): Promise<InstallResult> {
    if (!start) return result;
    const id = result.record.pluginId;
    try {
      await this.opts.runtime.start(id);
      const stored = await this.opts.store.update(id, (current) => (current.enabled ? undefined : { ...current, enabled: true }));
      const record = stored?.transport === 'stdio-jsonrpc' ? stored : { ...result.record, enabled: true };
      return { ...result, record, started: true };
    } catch (e) {
      const err = e as { code?: string; message: string };
      this.opts.log?.('warn', `installed ${id}, but it did not start: ${err.message}`);
      return { ...result, started: false, startError: { code: err.code ?? 'INTERNAL', message: err.message } };
    }
  }

  /** One operation at a time (the journal is one file), holding the plugin's lock. */
  private exclusiveFor<T>(pluginId: string, fn: () => Promise<T>): Promise<T> {
    return this.exclusive(() => this.locks.run(pluginId, fn));
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.queue.run(fn);
  }
}
