import type { StdioPluginRecord } from '@host/host-core';
import { promises as fs, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from './atomic-write';
import { acquireDataDirLock, DataDirLockedError } from './data-dir-lock';
import { JsonRegistryStore, RegistryCorruptError } from './json-registry-store';

function record(id: string, version = '1.0.0'): StdioPluginRecord {
  return {
    pluginId: id,
    transport: 'stdio-jsonrpc',
    installedAt: '2024-01-01T00:00:00.000Z',
    updatedAt: '2024-01-01T00:00:00.000Z',
    enabled: false,
    packageSha256: 'ab'.repeat(32),
    manifest: { pluginId: id, version } as StdioPluginRecord['manifest'],
  };
}

describe('JsonRegistryStore', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'registry-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps records and meta across reopen', async () => {
    const s = await JsonRegistryStore.open(dir);
    await s.put(record('com.example.b'));
    await s.put(record('com.example.a'));
    await s.setMeta('k', 'v');
    await s.close();
    const again = await JsonRegistryStore.open(dir);
    expect((await again.list()).map((r) => r.pluginId)).toEqual(['com.example.a', 'com.example.b']);
    expect(await again.getMeta('k')).toBe('v');
    await again.delete('com.example.a');
    expect(await again.get('com.example.a')).toBeUndefined();
    expect((await JsonRegistryStore.open(dir)).file).toBe(join(dir, 'registry.json'));
    expect((await (await JsonRegistryStore.open(dir)).list()).length).toBe(1);
  });

  it('serialises concurrent writes without losing any', async () => {
    const s = await JsonRegistryStore.open(dir);
    await Promise.all(Array.from({ length: 20 }, (_, i) => s.put(record(`com.example.p${i}`))));
    const again = await JsonRegistryStore.open(dir);
    expect((await again.list()).length).toBe(20);
  });

  it('returns copies, so callers cannot change stored records by mutation', async () => {
    const s = await JsonRegistryStore.open(dir);
    await s.put(record('com.example.a'));
    const r = (await s.get('com.example.a'))!;
    r.enabled = true;
    expect((await s.get('com.example.a'))!.enabled).toBe(false);
  });

  // Ids reach get() from request URLs; a name every object inherits is not a record.
  it('finds no record or meta value under inherited property names', async () => {
    const s = await JsonRegistryStore.open(dir);
    await s.put(record('com.example.a'));
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      expect(await s.get(name)).toBeUndefined();
      expect(await s.getMeta(name)).toBeUndefined();
    }
    await s.close();
  });

  it('refuses a corrupt registry file with a message that says how to recover', async () => {
    await fs.writeFile(join(dir, 'registry.json'), '{"formatVersion": 1, "plugins": ');
    await expect(JsonRegistryStore.open(dir)).rejects.toBeInstanceOf(RegistryCorruptError);
    await fs.writeFile(join(dir, 'registry.json'), '{"formatVersion": 7}');
    await expect(JsonRegistryStore.open(dir)).rejects.toThrow(/format version 1/);
  });

  it('removes temporary files of interrupted writes on open', async () => {
    await fs.writeFile(join(dir, '.registry.json.0123456789ab.tmp'), 'partial');
    await JsonRegistryStore.open(dir);
    expect(await fs.readdir(dir)).toEqual([]);
  });
});

describe('writeFileAtomic', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'atomic-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('replaces the file and leaves no temporary file', async () => {
    const f = join(dir, 'a.json');
    await writeFileAtomic(f, 'one');
    await writeFileAtomic(f, 'two', { mode: 0o600 });
    expect(await fs.readFile(f, 'utf8')).toBe('two');
    expect(await fs.readdir(dir)).toEqual(['a.json']);
    if (process.platform !== 'win32') expect((await fs.stat(f)).mode & 0o777).toBe(0o600);
  });

  it('leaves the old content when the write cannot complete', async () => {
    const f = join(dir, 'a.json');
    await writeFileAtomic(f, 'one');
    await fs.mkdir(join(dir, 'sub'));
    // Renaming a file over a directory fails: the target must stay intact.
    await expect(writeFileAtomic(join(dir, 'sub'), 'x')).rejects.toThrow();
    expect(await fs.readFile(f, 'utf8')).toBe('one');
    expect((await fs.readdir(dir)).sort()).toEqual(['a.json', 'sub']);
  });
});

describe('acquireDataDirLock', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'lock-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a second live owner and takes over a stale lock', async () => {
    // pid 1 is always alive: the lock counts as held by another process.
    await fs.writeFile(join(dir, 'host.lock'), '1\n');
    await expect(acquireDataDirLock(dir)).rejects.toBeInstanceOf(DataDirLockedError);
    // A pid far above any pid_max is certainly not running.
    await fs.writeFile(join(dir, 'host.lock'), '2147483646\n');
    const release = await acquireDataDirLock(dir);
    expect((await fs.readFile(join(dir, 'host.lock'), 'utf8')).trim()).toBe(String(process.pid));
    await release();
    expect(await fs.readdir(dir)).toEqual([]);
  });
});
