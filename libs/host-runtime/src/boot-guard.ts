import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SerialQueue } from '@host/host-core';

export const BOOT_GUARD_FILE = 'running-plugins.json';

interface Entry {
  /** Host starts in a row that found this plugin still marked as running: the host had died with it. */
  hostDeaths: number;
  /** Why it is held back, until an operator starts it. */
  heldBack?: string;
}

export interface BootGuardOptions {
  /** Host deaths in a row with the plugin running after which it is not started on boot. */
  limit: number;
  /** How long the plugin must run before earlier host deaths are forgotten. */
  settleMilliseconds: number;
}

/** What the boot guard says about starting one plugin as the host starts. */
export type BootDecision = { start: true } | { start: false; reason: string };

/**
 * Remembers, in `<state>/running-plugins.json`, which stdio plugins have a
 * process. A clean host shutdown stops them all and so empties the file; an
 * entry found when the host starts means the host died while that plugin
 * ran. If that happens `limit` times in a row, each time before the plugin
 * had run for `settleMilliseconds`, the plugin is not started on boot
 * (it goes to `failed` with the reason), on this boot and the next ones,
 * until an operator starts it: a plugin that takes the host down must not do
 * so again on every restart. A plugin that runs for `settleMilliseconds` has
 * its count reset; an operator's start also starts from zero.
 */
export class BootGuard {
  /** What is (about to be) on disk: the plugins with a process now. */
  private readonly entries: Record<string, Entry> = {};
  /** Host deaths found at boot, for plugins started on this boot and not yet running. */
  private readonly carried = new Map<string, number>();
  private readonly writes = new SerialQueue();
  private readonly settleTimers = new Map<string, NodeJS.Timeout>();
  private loaded: Promise<Record<string, Entry>> | null = null;
  private decided = false;
  private readonly file: string;

  constructor(
    private readonly stateDir: string,
    private readonly o: BootGuardOptions,
  ) {
    this.file = join(stateDir, BOOT_GUARD_FILE);
  }

  /** The entries left by the previous host process, read once (before this process writes any). */
  private leftovers(): Promise<Record<string, Entry>> {
    this.loaded ??= readFile(this.file, 'utf8').then(
      (text) => {
        const parsed = JSON.parse(text) as unknown;
        const out: Record<string, Entry> = {};
        if (parsed && typeof parsed === 'object') {
          for (const [id, e] of Object.entries(parsed as Record<string, { hostDeaths?: unknown; heldBack?: unknown }>)) {
            out[id] = {
              hostDeaths: typeof e?.hostDeaths === 'number' && e.hostDeaths >= 0 ? e.hostDeaths : 0,
              ...(typeof e?.heldBack === 'string' ? { heldBack: e.heldBack } : {}),
            };
          }
        }
        return out;
      },
      () => ({}),
    );
    return this.loaded;
  }

  /**
   * Decides whether `pluginId` starts on this boot. A plugin held back stays
   * held back on later boots until an operator starts it (which counts from zero).
   */
  async decide(pluginId: string): Promise<BootDecision> {
    const left = (await this.leftovers())[pluginId];
    // The file says from now on what this host process runs, whatever it starts.
    if (!this.decided) {
      this.decided = true;
      this.save();
    }
    if (!left) return { start: true };
    if (left.heldBack) return this.holdBack(pluginId, left.hostDeaths, left.heldBack);
    const hostDeaths = left.hostDeaths + 1;
    if (hostDeaths >= this.o.limit) {
      return this.holdBack(
        pluginId,
        hostDeaths,
        `not started with the host: the host stopped unexpectedly ${hostDeaths} times in a row while this plugin was running, ` +
          `each time within ${Math.round(this.o.settleMilliseconds / 60_000)} min of its start. Check its log, then start it by hand.`,
      );
    }
    this.carried.set(pluginId, hostDeaths);
    return { start: true };
  }

  private holdBack(pluginId: string, hostDeaths: number, reason: string): BootDecision {
    this.entries[pluginId] = { hostDeaths, heldBack: reason };
    this.save();
    return { start: false, reason };
  }

  /** The plugin has (or is about to have) a process: keep it in the file. */
  running(pluginId: string): void {
    if (pluginId in this.entries && !this.entries[pluginId]!.heldBack) return;
    const hostDeaths = this.carried.get(pluginId) ?? 0;
    this.carried.delete(pluginId);
    this.entries[pluginId] = { hostDeaths };
    this.save();
    if (hostDeaths === 0) return;
    const timer = setTimeout(() => {
      this.settleTimers.delete(pluginId);
      if (!this.entries[pluginId]) return;
      this.entries[pluginId] = { hostDeaths: 0 };
      this.save();
    }, this.o.settleMilliseconds);
    timer.unref();
    this.settleTimers.set(pluginId, timer);
  }

  /** The plugin has no process any more (stopped, failed, forgotten). */
  notRunning(pluginId: string): void {
    const timer = this.settleTimers.get(pluginId);
    if (timer) clearTimeout(timer);
    this.settleTimers.delete(pluginId);
    if (!(pluginId in this.entries) || this.entries[pluginId]!.heldBack) return;
    delete this.entries[pluginId];
    this.save();
  }

  /** The plugin was uninstalled: nothing about it is kept. */
  forget(pluginId: string): void {
    this.notRunning(pluginId);
    this.carried.delete(pluginId);
    if (!(pluginId in this.entries)) return;
    delete this.entries[pluginId];
    this.save();
  }

  /** Resolves when every change so far is on disk. */
  flushed(): Promise<void> {
    return this.writes.idle();
  }

  private save(): void {
    void this.writes
      .run(async () => {
        // The leftovers must be read before the first write replaces them.
        await this.leftovers();
        await mkdir(this.stateDir, { recursive: true });
        const tmp = `${this.file}.tmp`;
        await writeFile(tmp, JSON.stringify(this.entries) + '\n');
        await rename(tmp, this.file);
      })
      .catch(() => undefined);
  }
}
