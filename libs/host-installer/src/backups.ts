import { fsyncDir } from '@host/host-fs';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { BACKUPS_KEPT } from './limits';

export interface BackupInfo {
  /** Folder name: `<UTC stamp>-<version>`. */
  name: string;
  version: string;
  createdAt: string;
  path: string;
}

/** `2024-05-01T10:20:30.456Z` -> `20240501T102030456Z`: sortable and valid on every file system. */
function stamp(date: Date): string {
  return date.toISOString().replace(/[-:.]/g, '');
}

/** A fresh backup folder path (not created) for a package of `version`. */
export async function newBackupPath(dir: string, version: string, now: Date): Promise<string> {
  await fs.mkdir(dir, { recursive: true });
  const base = `${stamp(now)}-${version.replace(/[^0-9A-Za-z.+-]/g, '_')}`;
  for (let i = 1; ; i++) {
    const p = join(dir, i === 1 ? base : `${base}-${i}`);
    try {
      await fs.access(p);
    } catch {
      return p;
    }
  }
}

export async function listBackups(dir: string): Promise<BackupInfo[]> {
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  return names
    .map((name) => {
      const m = /^(\d{8})T(\d{2})(\d{2})(\d{2})(\d{3})Z-(.+?)(?:-\d+)?$/.exec(name);
      if (!m) return undefined;
      const [, d, hh, mm, ss, ms, version] = m as unknown as string[];
      const createdAt = `${d!.slice(0, 4)}-${d!.slice(4, 6)}-${d!.slice(6, 8)}T${hh}:${mm}:${ss}.${ms}Z`;
      return { name, version: version!, createdAt, path: join(dir, name) };
    })
    .filter((b): b is BackupInfo => b !== undefined)
    .sort((a, b) => b.name.localeCompare(a.name));
}

/** Keeps the newest `keep` backups of one plugin. */
export async function pruneBackups(dir: string, keep = BACKUPS_KEPT): Promise<void> {
  const all = await listBackups(dir);
  for (const old of all.slice(keep)) await fs.rm(old.path, { recursive: true, force: true });
  if (all.length > keep) await fsyncDir(dir);
}
