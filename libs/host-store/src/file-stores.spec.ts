import { hostPaths, type HostPaths } from '@host/host-core';
import { promises as fs, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FilePendingUpdateStore } from './file-pending-update-store';
import { FileSettingsStore, settingsFile } from './file-settings-store';

const ID = 'com.example.echo';

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

  it('loses no change when saves of one plugin run at once', async () => {
    const s = new FileSettingsStore(paths);
    await Promise.all(Array.from({ length: 15 }, (_, i) => s.update(ID, (v) => ({ ...v, [`k${i}`]: i }))));
    expect(Object.keys(await s.get(ID))).toHaveLength(15);
  });

  it('writes nothing when the change refuses, and reads an unreadable file as nothing set', async () => {
    const s = new FileSettingsStore(paths);
    await expect(
      s.update(ID, () => {
        throw new Error('invalid');
      }),
    ).rejects.toThrow('invalid');
    await fs.mkdir(paths.configDirOf(ID), { recursive: true });
    await fs.writeFile(settingsFile(paths, ID), '{"values": ');
    expect(await s.get(ID)).toEqual({});
  });

  it('forgets values on delete, and refuses ids that are not plugin ids', async () => {
    const s = new FileSettingsStore(paths);
    await s.update(ID, () => ({ a: 1 }));
    await s.delete(ID);
    await s.delete(ID);
    expect(await s.get(ID)).toEqual({});
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

  it('keeps an archive with its description until deleted', async () => {
    const s = new FilePendingUpdateStore(dir);
    await s.save(id, Buffer.from('zip bytes'), { id, pluginId: ID });
    expect(await s.list()).toEqual([id]);
    expect(await s.read(id)).toEqual({ id, pluginId: ID });
    expect(Buffer.from((await s.readArchive(id))!).toString()).toBe('zip bytes');
    await s.delete(id);
    expect(await s.list()).toEqual([]);
    expect(await s.read(id)).toBeUndefined();
    expect(await s.readArchive(id)).toBeUndefined();
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
