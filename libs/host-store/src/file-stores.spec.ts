import { hostPaths, type HostPaths } from '@host/host-core';
import { promises as fs, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FilePendingUpdateStore } from './file-pending-update-store';
import { FileSettingsStore, settingsFile } from './file-settings-store';
import { describePendingUpdateStoreContract } from './testing/pending-update-store-contract';
import { describeSettingsStoreContract } from './testing/settings-store-contract';

const ID = 'com.example.echo';

let contractPaths: HostPaths;
describeSettingsStoreContract('FileSettingsStore', {
  open: async () => new FileSettingsStore((contractPaths = hostPaths(mkdtempSync(join(tmpdir(), 'settings-contract-'))))),
  reopen: async () => new FileSettingsStore(contractPaths),
  cleanup: async () => rmSync(contractPaths.dataDir, { recursive: true, force: true }),
});

let contractDir = '';
describePendingUpdateStoreContract('FilePendingUpdateStore', {
  open: async () => new FilePendingUpdateStore(join((contractDir = mkdtempSync(join(tmpdir(), 'pending-contract-'))), 'pending')),
  reopen: async () => new FilePendingUpdateStore(join(contractDir, 'pending')),
  cleanup: async () => rmSync(contractDir, { recursive: true, force: true }),
});

describe('FileSettingsStore', () => {
  let paths: HostPaths;
  beforeEach(() => {
    paths = hostPaths(mkdtempSync(join(tmpdir(), 'settings-store-')));
  });
  afterEach(() => rmSync(paths.dataDir, { recursive: true, force: true }));

  it('keeps values in the config dir as {"values": ...}, readable only by the host user', async () => {
    const s = new FileSettingsStore(paths);
    expect(await s.get(ID)).toEqual({});
    expect(await s.update(ID, (v) => ({ ...v, mode: 'fast', token: 'secret' }))).toEqual({ mode: 'fast', token: 'secret' });
    expect(JSON.parse(await fs.readFile(settingsFile(paths, ID), 'utf8'))).toEqual({ values: { mode: 'fast', token: 'secret' } });
    if (process.platform !== 'win32') expect((await fs.stat(settingsFile(paths, ID))).mode & 0o777).toBe(0o600);
    expect(await new FileSettingsStore(paths).get(ID)).toEqual({ mode: 'fast', token: 'secret' });
  });

  it('reads a missing or unreadable file as nothing set', async () => {
    const s = new FileSettingsStore(paths);
    await fs.mkdir(paths.configDirOf(ID), { recursive: true });
    await fs.writeFile(settingsFile(paths, ID), '{"values": ');
    expect(await s.get(ID)).toEqual({});
    await fs.writeFile(settingsFile(paths, ID), '[1, 2]');
    expect(await s.get(ID)).toEqual({});
  });

  it('removes the file on delete, and refuses ids that are not plugin ids', async () => {
    const s = new FileSettingsStore(paths);
    await s.update(ID, () => ({ a: 1 }));
    await s.delete(ID);
    expect(await fs.readdir(paths.configDirOf(ID))).toEqual([]);
    await expect(s.get('../../etc')).rejects.toThrow(/not a valid pluginId/);
  });
});

describe('FilePendingUpdateStore', () => {
  let dir: string;
  beforeEach(() => {
    dir = join(mkdtempSync(join(tmpdir(), 'pending-store-')), 'pending');
  });
  afterEach(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

  const id = '0b7e2a4e-8f5a-4a57-9d43-3c1a2b3c4d5e';

  it('keeps <id>.zip and <id>.json, readable only by the host user, and removes both on delete', async () => {
    const s = new FilePendingUpdateStore(dir);
    await s.save(id, Buffer.from('zip bytes'), { id, pluginId: ID });
    expect((await fs.readdir(dir)).sort()).toEqual([`${id}.json`, `${id}.zip`]);
    if (process.platform !== 'win32') expect((await fs.stat(join(dir, `${id}.zip`))).mode & 0o777).toBe(0o600);
    await s.delete(id);
    expect(await fs.readdir(dir)).toEqual([]);
  });

  it('removes what a crash left (an archive without description, temporary files) on first use', async () => {
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(join(dir, `${id}.zip`), 'orphan');
    await fs.writeFile(join(dir, `.${id}.json.0123456789ab.tmp`), 'partial');
    const s = new FilePendingUpdateStore(dir);
    expect(await s.list()).toEqual([]);
    expect(await fs.readdir(dir)).toEqual([]);
  });

  it('finds nothing under ids that are not file-name safe, and refuses to save under them', async () => {
    const s = new FilePendingUpdateStore(dir);
    expect(await s.read('../registry')).toBeUndefined();
    expect(await s.readArchive('../registry')).toBeUndefined();
    await expect(s.save('../x', Buffer.from('x'), {})).rejects.toThrow(/not a valid pending update id/);
  });
});
