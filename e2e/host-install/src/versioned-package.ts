import { buildZip, testManifest, type ZipEntrySpec } from '@host/host-installer/testing';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const PLUGIN_ID = 'com.example.crashy';

/** Deterministic pseudo-random numbers (mulberry32), so a failing seed can be replayed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A package whose every file starts with `v<version>:`, so a folder that
 * mixes two versions, or misses files, is detected by reading it.
 */
export function versionedPackage(version: string, files: number): Buffer {
  const entries: ZipEntrySpec[] = [
    { name: 'manifest.json', data: JSON.stringify(testManifest({ pluginId: PLUGIN_ID, version })) },
    { name: 'index.js', data: `v${version}: entry\n` },
  ];
  for (let i = 0; i < files; i++) {
    entries.push({ name: `lib/m${i % 17}/file-${i}.js`, data: `v${version}: ${'module.exports = "filler";\n'.repeat(40 + (i % 60))}` });
  }
  return buildZip(entries);
}

/** Checks one package folder; returns its version, or throws describing the mix. */
export function folderVersion(dir: string, files: number): string {
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { version: string };
  const seen: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name !== 'manifest.json') seen.push(p);
    }
  };
  walk(dir);
  if (seen.length !== files + 1) throw new Error(`${dir} has ${seen.length} files, expected ${files + 1}: a partial package`);
  for (const p of seen) {
    const head = readFileSync(p, 'utf8').slice(0, 32);
    if (!head.startsWith(`v${manifest.version}:`))
      throw new Error(`${p} is not from version ${manifest.version} (starts "${head.slice(0, 12)}"): a mixed package`);
  }
  return manifest.version;
}

/**
 * The invariants a crash must never break: the registry entry and the folder
 * agree (both absent, or both the same complete version), no staging or
 * journal is left after a start, and every backup is a complete version.
 */
export function checkConsistent(dataDir: string, files: number): { version: string | null; backups: string[] } {
  const registry = JSON.parse(readFileSync(join(dataDir, 'state', 'registry.json'), 'utf8')) as {
    plugins: Record<string, { manifest: { version: string } }>;
  };
  const record = registry.plugins[PLUGIN_ID];
  const dir = join(dataDir, 'plugins-v2', PLUGIN_ID);
  if (!record) {
    if (existsSync(dir)) throw new Error('a package folder without a registry entry');
  } else {
    if (!existsSync(dir)) throw new Error('a registry entry without its package folder');
    const v = folderVersion(dir, files);
    if (v !== record.manifest.version) throw new Error(`registry says ${record.manifest.version}, folder holds ${v}`);
  }
  const staging = join(dataDir, 'plugins-v2', '.staging');
  if (existsSync(staging) && readdirSync(staging).length) throw new Error(`staging left behind: ${readdirSync(staging).join(', ')}`);
  if (existsSync(join(dataDir, 'state', 'install-journal.json'))) throw new Error('install journal left behind');
  const backupsDir = join(dataDir, 'backups', PLUGIN_ID);
  const backups = existsSync(backupsDir) ? readdirSync(backupsDir).map((b) => folderVersion(join(backupsDir, b), files)) : [];
  if (backups.length > 3) throw new Error(`${backups.length} backups kept, expected at most 3`);
  return { version: record?.manifest.version ?? null, backups };
}
