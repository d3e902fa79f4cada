import { HostError, type HostPaths, type RegistryStore, type StdioPluginRecord } from '@host/host-core';
import { fsyncDir } from '@host/host-fs';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join, relative } from 'node:path';
import { newBackupPath } from './backups';
import { extractEntries } from './extract';
import type { PackagePlan } from './inspect';
import { clearJournal, readJournal, writeJournal, type Journal } from './journal';
import type { InstallLimits } from './limits';

/** Points of a folder swap, in order; `onStep` runs after each. */
export type InstallStep = 'extracted' | 'journal-written' | 'old-moved' | 'new-moved' | 'registry-written';

/** What the start found of a swap a crash interrupted. */
export interface SwapRecovery {
  journal: 'none' | 'completed' | 'rolledBack';
  pluginId?: string;
}

export interface PackageSwapOptions {
  paths: HostPaths;
  store: RegistryStore;
  limits: InstallLimits;
  now: () => Date;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** Called after each step of a swap (tests make it fail or crash there). */
  onStep?: (step: InstallStep, pluginId: string) => void | Promise<void>;
}

/**
 * The journalled swap of a plugin's package folder (docs/protocol/v2.md 10.4): the new folder unpacked beside
 * it, the old one moved to a backup, the new one moved in and the registry record written, with the journal
 * (one file, `<state>/install-journal.json`) saying how far it got, so a failure is undone at once and a crash is
 * completed or rolled back at the next start ({@link recover}). The installer holds the locks around each call.
 */
export class PackageSwap {
  private readonly paths: HostPaths;

  constructor(private readonly opts: PackageSwapOptions) {
    this.paths = opts.paths;
  }

  /**
   * Extracts `plan` into staging, then swaps folders under the journal: the old folder to its backup, staging into
   * place, then the registry record. On any failure before the registry write, the swap is undone and
   * INSTALL_FAILED is thrown. With `stored` (a sync), writes no record: the folder is brought in line with the
   * record another host stored.
   */
  async replace(
    plan: PackagePlan,
    previous: StdioPluginRecord | undefined,
    stored?: StdioPluginRecord,
  ): Promise<{ record: StdioPluginRecord; backup: string | null }> {
    const id = plan.manifest.pluginId;
    const pkg = this.paths.packageDir(id);
    const staging = join(this.paths.stagingRoot, `${id}.${randomBytes(6).toString('hex')}`);
    const step = async (s: InstallStep) => this.opts.onStep?.(s, id);
    try {
      await extractEntries({ destination: staging, limits: this.opts.limits, files: plan.files });
      await step('extracted');
    } catch (e) {
      await fs.rm(staging, { recursive: true, force: true });
      if (e instanceof HostError) throw e;
      // A disk error (ENOSPC, EACCES...) while unpacking: nothing was swapped yet.
      throw new HostError('INSTALL_FAILED', `Unpacking ${id} failed (${(e as Error).message}); nothing was changed.`, {
        pluginId: id,
        cause: (e as Error).message,
        restored: true,
      });
    }
    const now = this.opts.now().toISOString();
    const record: StdioPluginRecord = stored ?? {
      pluginId: id,
      transport: 'stdio-jsonrpc',
      manifest: plan.manifest,
      packageSha256: plan.sha256,
      installedAt: previous?.installedAt ?? now,
      updatedAt: now,
      enabled: previous?.enabled ?? false,
    };
    const hasOld = await exists(pkg);
    const backup = hasOld ? await newBackupPath(this.paths.backupsDir(id), previous?.manifest.version ?? 'unknown', this.opts.now()) : null;
    const journal: Journal = {
      op: 'replace',
      pluginId: id,
      staging: this.rel(staging),
      backup: backup && this.rel(backup),
      record,
      startedAt: now,
      ...(stored ? { writesRecord: false } : {}),
    };
    let registryWritten = false;
    let written: StdioPluginRecord = record;
    try {
      await writeJournal(this.paths.stateDir, journal);
      await step('journal-written');
      if (backup) {
        await fs.rename(pkg, backup);
        await step('old-moved');
      }
      await fs.rename(staging, pkg);
      await fsyncDir(this.paths.packagesRoot);
      await step('new-moved');
      if (!stored) written = await this.writeRecord(record, previous !== undefined);
      registryWritten = true;
      await step('registry-written');
    } catch (e) {
      if (registryWritten) {
        this.opts.log?.('warn', `install of ${id}: ${(e as Error).message} after the registry write; the new version stays`);
      } else {
        const restored = await this.rollback(journal);
        // The id went to another plugin meanwhile: say so, not "install failed".
        if (e instanceof HostError) throw e;
        throw new HostError(
          'INSTALL_FAILED',
          `Installing ${id} ${plan.manifest.version} failed part-way (${(e as Error).message}); ${previous ? `version ${previous.manifest.version} was restored` : 'nothing was installed'}.`,
          { pluginId: id, cause: (e as Error).message, restored },
        );
      }
    }
    await clearJournal(this.paths.stateDir).catch((e: Error) =>
      this.opts.log?.('warn', `could not remove the install journal: ${e.message}`),
    );
    return { record: written, backup };
  }

  /**
   * The registry write of a swap. A new plugin takes its id only if it is
   * still free; an update changes the package fields of the stored record and
   * keeps what others may have changed meanwhile (enabled).
   */
  private async writeRecord(record: StdioPluginRecord, isUpdate: boolean): Promise<StdioPluginRecord> {
    const id = record.pluginId;
    if (!isUpdate) {
      const taken = await this.opts.store.putIfAbsent(record);
      if (taken) {
        throw new HostError(
          'INSTALL_ID_TAKEN',
          `"${id}" was taken by ${taken.transport === 'http' ? 'an HTTP plugin registration' : 'another install'} while this package was being installed; nothing was installed. Remove that plugin or choose another pluginId.`,
          {
            pluginId: id,
          },
        );
      }
      return record;
    }
    const stored = await this.opts.store.update(id, (current) =>
      current.transport === 'stdio-jsonrpc' ? { ...record, installedAt: current.installedAt, enabled: current.enabled } : undefined,
    );
    if (!stored) throw new Error(`the registry entry of ${id} was removed during the update`);
    if (stored.transport !== 'stdio-jsonrpc') throw new Error(`${id} was registered as an HTTP plugin during the update`);
    return stored;
  }

  /**
   * Undoes a swap: the new folder goes back to staging, the backup back into
   * place, staging is removed. The journal stays until this completes, so a
   * crash during rollback is rolled back again on the next start.
   */
  private async rollback(j: Extract<Journal, { op: 'replace' }>): Promise<boolean> {
    const pkg = this.paths.packageDir(j.pluginId);
    const staging = join(this.paths.dataDir, j.staging);
    const backup = j.backup && join(this.paths.dataDir, j.backup);
    try {
      if (!(await exists(staging)) && (await exists(pkg))) await fs.rename(pkg, staging);
      if (backup && (await exists(backup)) && !(await exists(pkg))) await fs.rename(backup, pkg);
      await fsyncDir(this.paths.packagesRoot);
      await fs.rm(staging, { recursive: true, force: true });
      await clearJournal(this.paths.stateDir);
      return true;
    } catch (e) {
      this.opts.log?.('error', `rollback of ${j.pluginId} failed (${(e as Error).message}); it completes on the next start`);
      return false;
    }
  }

  /** Completes or rolls back the swap a crash interrupted. */
  async recover(): Promise<SwapRecovery> {
    const j = await readJournal(this.paths.stateDir).catch(() => undefined);
    if (!j) {
      await clearJournal(this.paths.stateDir);
      return { journal: 'none' };
    }
    const pkg = this.paths.packageDir(j.pluginId);
    const backup = j.backup && join(this.paths.dataDir, j.backup);
    if (j.op === 'uninstall') {
      if (backup && (await exists(pkg)) && !(await exists(backup))) await fs.rename(pkg, backup);
      await this.opts.store.delete(j.pluginId);
      await clearJournal(this.paths.stateDir);
      this.opts.log?.('warn', `completed the uninstall of ${j.pluginId} that a crash interrupted`);
      return { journal: 'completed', pluginId: j.pluginId };
    }
    // Staging still present means the new folder never reached its place (or was moved back): roll back.
    if (!(await exists(join(this.paths.dataDir, j.staging))) && (await exists(pkg))) {
      if (j.writesRecord !== false) await this.opts.store.put(j.record);
      await clearJournal(this.paths.stateDir);
      this.opts.log?.('warn', `completed the install of ${j.pluginId} ${j.record.manifest.version} that a crash interrupted`);
      return { journal: 'completed', pluginId: j.pluginId };
    }
    await this.rollback(j);
    this.opts.log?.('warn', `rolled back the install of ${j.pluginId} ${j.record.manifest.version} that a crash interrupted`);
    return { journal: 'rolledBack', pluginId: j.pluginId };
  }

  /** `p` relative to the data directory, as the journal names folders. */
  rel(p: string): string {
    return relative(this.paths.dataDir, p);
  }
}

/** Whether `p` exists. */
export async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}
