import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { UidRange } from './settings';

/** Where each plugin's uid is written down (in the host's state folder). */
export const PLUGIN_UIDS_FILE = 'plugin-uids.json';

/**
 * One stable uid per plugin id, from the configured range. The first choice
 * is derived from the id (so a lost file gives mostly the same uids back);
 * a uid another plugin holds, or that /etc/passwd names, is skipped. Every
 * choice is written down, so a uid never changes while its record exists and
 * two plugins never share one.
 */
export class PluginUids {
  private readonly byPlugin = new Map<string, number>();

  constructor(
    private readonly file: string,
    private readonly range: UidRange,
    private readonly passwdFile = '/etc/passwd',
  ) {
    this.reload();
  }

  /** Takes in what the file holds (another PluginUids of the host, the doctor's, may have chosen since). */
  private reload(): void {
    try {
      const saved = JSON.parse(readFileSync(this.file, 'utf8')) as { uids?: Record<string, unknown> };
      for (const [id, uid] of Object.entries(saved.uids ?? {})) {
        if (Number.isInteger(uid) && (uid as number) >= this.range.first && (uid as number) <= this.range.last)
          this.byPlugin.set(id, uid as number);
      }
    } catch {
      // none yet
    }
  }

  uidOf(pluginId: string): number {
    let known = this.byPlugin.get(pluginId);
    if (known !== undefined) return known;
    // Read and written in one synchronous step, so two instances in the host's process never choose apart.
    this.reload();
    known = this.byPlugin.get(pluginId);
    if (known !== undefined) return known;
    const taken = new Set([...this.byPlugin.values(), ...this.systemUids()]);
    const size = this.range.last - this.range.first + 1;
    const start = createHash('sha256').update(pluginId).digest().readUInt32BE(0) % size;
    for (let i = 0; i < size; i++) {
      const uid = this.range.first + ((start + i) % size);
      if (taken.has(uid)) continue;
      this.byPlugin.set(pluginId, uid);
      this.save();
      return uid;
    }
    throw new Error(`every uid of ${this.range.first}-${this.range.last} is taken; widen HOST_PLUGIN_UID_RANGE`);
  }

  private systemUids(): number[] {
    try {
      return readFileSync(this.passwdFile, 'utf8')
        .split('\n')
        .map((line) => Number(line.split(':')[2]))
        .filter((uid) => Number.isInteger(uid));
    } catch {
      return [];
    }
  }

  private save(): void {
    mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
    const temporary = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify({ range: `${this.range.first}-${this.range.last}`, uids: Object.fromEntries(this.byPlugin) }), {
      mode: 0o600,
    });
    renameSync(temporary, this.file);
  }
}
