import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FilePackageArchiveStore } from './file-package-archive-store';
import { sha256Hex, SqlPackageArchiveStore } from './sql/package-archive-store';
import { describePackageArchiveStoreContract, useEmbeddedDatabase } from './testing';

const embedded = useEmbeddedDatabase('host-archive-files-');
const dir = () => embedded.dir();
const db = () => embedded.db();

let n = 0;
let archives: string;
const open = async (earlier?: SqlPackageArchiveStore) => {
  archives = join(dir(), `archives-${n++}`);
  await db().query('DELETE FROM host_package_archives');
  return new FilePackageArchiveStore(archives, earlier);
};
const damage = async (sha256: string) => writeFileSync(join(archives, `${sha256}.zip`), 'changed');

describePackageArchiveStoreContract('FilePackageArchiveStore', { open: () => open(), damage });
describePackageArchiveStoreContract('FilePackageArchiveStore over archives a host kept in the database before', {
  open: () => open(new SqlPackageArchiveStore(db())),
  damage,
});

describe('FilePackageArchiveStore', () => {
  it('writes files of its own (0600 in a 0700 folder) and nothing into the database', async () => {
    const store = await open(new SqlPackageArchiveStore(db()));
    const digest = await store.put(Buffer.from('archive'));
    expect(readdirSync(archives)).toEqual([`${digest}.zip`]);
    expect(statSync(archives).mode & 0o777).toBe(0o700);
    expect(statSync(join(archives, `${digest}.zip`)).mode & 0o777).toBe(0o600);
    expect((await db().query<{ n: number }>('SELECT count(*)::int AS n FROM host_package_archives'))[0]!.n).toBe(0);
  });

  it('reads and forgets an archive an earlier host kept in the database, without copying it', async () => {
    const earlier = new SqlPackageArchiveStore(db());
    const store = await open(earlier);
    const bytes = Buffer.from('kept in the database');
    const digest = await earlier.put(bytes);
    expect(await store.has(digest)).toBe(true);
    expect(Buffer.from((await store.get(digest))!).equals(bytes)).toBe(true);
    expect(existsSync(join(archives, `${digest}.zip`))).toBe(false);
    expect(await store.put(bytes)).toBe(digest);
    expect(existsSync(join(archives, `${digest}.zip`))).toBe(false);
    expect(await store.retainOnly(new Set())).toBe(1);
    expect(await earlier.has(digest)).toBe(false);
  });

  it("removes what a put left when its host stopped during it, once it is an hour old, and leaves others' files", async () => {
    const store = await open();
    const kept = await store.put(Buffer.from('kept'));
    const oldLeftover = join(archives, `.${sha256Hex(Buffer.from('x'))}.zip.0a1b2c3d4e5f.tmp`);
    const newLeftover = join(archives, `.${sha256Hex(Buffer.from('y'))}.zip.3d4e5f6a7b8c.tmp`);
    writeFileSync(oldLeftover, 'part');
    writeFileSync(newLeftover, 'part');
    writeFileSync(join(archives, 'README'), 'not an archive');
    const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60_000);
    utimesSync(oldLeftover, twoHoursAgo, twoHoursAgo);
    expect(await store.retainOnly(new Set([kept]))).toBe(0);
    expect(readdirSync(archives).sort()).toEqual([newLeftover.slice(archives.length + 1), `${kept}.zip`, 'README'].sort());
  });

  it('answers that nothing is kept before its folder exists', async () => {
    const store = new FilePackageArchiveStore(join(dir(), 'not-yet'));
    expect(await store.has('0'.repeat(64))).toBe(false);
    expect(await store.retainOnly(new Set())).toBe(0);
  });
});

it('counts an archive put again as stored now, so the grace spares it for the install under way', async () => {
  const store = await open();
  const digest = await store.put(Buffer.from('again'));
  const longAgo = new Date(Date.now() - 2 * 60 * 60_000);
  utimesSync(join(archives, `${digest}.zip`), longAgo, longAgo);
  expect(await store.put(Buffer.from('again'))).toBe(digest);
  expect(await store.retainOnly(new Set(), 60 * 60_000)).toBe(0);
  expect(await store.has(digest)).toBe(true);
});

it('copies into another store the archives it lacks, and leaves its files', async () => {
  const store = await open();
  const target = new SqlPackageArchiveStore(db());
  const a = await store.put(Buffer.from('moved to a server'));
  const b = await store.put(Buffer.from('already there'));
  await target.put(Buffer.from('already there'));
  expect(await store.copyInto(target)).toBe(1);
  expect(Buffer.from((await target.get(a))!).toString()).toBe('moved to a server');
  expect(await target.has(b)).toBe(true);
  expect(readdirSync(archives).sort()).toEqual([`${a}.zip`, `${b}.zip`].sort());
  expect(await store.copyInto(target)).toBe(0);
  expect(await new FilePackageArchiveStore(join(dir(), 'none')).copyInto(target)).toBe(0);
});

it('reads an archive whose reader keeps its digest once to keep it, and not again to hash it', async () => {
  const bytes = Buffer.from('an archive read in ranges, '.repeat(100_000));
  let read = 0;
  let hashed = 0;
  const reader = {
    size: bytes.length,
    read: (position: number, length: number) => {
      read += length;
      return bytes.subarray(position, position + length);
    },
    sha256: () => {
      hashed++;
      return sha256Hex(bytes);
    },
  };
  const store = await open();
  expect(await store.put(reader)).toBe(sha256Hex(bytes));
  expect(read).toBe(bytes.length);
  expect(hashed).toBe(1);
  expect(Buffer.from((await store.get(sha256Hex(bytes)))!).equals(bytes)).toBe(true);
  // Kept already: not read at all.
  read = 0;
  expect(await store.put(reader)).toBe(sha256Hex(bytes));
  expect(read).toBe(0);
});
