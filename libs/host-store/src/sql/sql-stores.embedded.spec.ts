import { join } from 'node:path';
import { describeSqlStoreContracts } from './sql-contracts.spec-helper';
import { randomUUID } from 'node:crypto';
import { FilePendingUpdateStore } from '../file-pending-update-store';
import { describePendingUpdateStoreContract } from '../testing/pending-update-store-contract';
import { useEmbeddedDatabase } from '../testing/embedded-database';
import { SqlPendingUpdateStore } from './sql-pending-update-store';

// The same contracts against the embedded database (PostgreSQL in-process, in a directory).
const embedded = useEmbeddedDatabase();
const db = () => embedded.db();

describeSqlStoreContracts('embedded', db);

// A host on the embedded database keeps pending updates as files (see openSqlStores), reading those an earlier
// version kept in the database.
let updates = '';
describePendingUpdateStoreContract('FilePendingUpdateStore over updates kept in the embedded database', {
  open: async () => {
    await db().query('DELETE FROM host_pending_updates');
    return new FilePendingUpdateStore((updates = join(embedded.dir(), `updates-${randomUUID()}`)), new SqlPendingUpdateStore(db()));
  },
  reopen: async () => new FilePendingUpdateStore(updates, new SqlPendingUpdateStore(db())),
});

it('reads, lists and deletes through the files the updates an earlier host kept in the database, and saves none there', async () => {
  await db().query('DELETE FROM host_pending_updates');
  const earlier = new SqlPendingUpdateStore(db());
  const id = randomUUID();
  await earlier.save(id, Buffer.from('kept in the database'), { id });
  const store = new FilePendingUpdateStore(join(embedded.dir(), `updates-${randomUUID()}`), earlier);
  expect(await store.list()).toEqual([id]);
  expect(await store.read(id)).toEqual({ id });
  expect(Buffer.from((await store.readArchive(id))!).toString()).toBe('kept in the database');
  expect(await store.archiveFile(id)).toBeUndefined();
  const fresh = randomUUID();
  await store.save(fresh, Buffer.from('new'), { id: fresh });
  expect(await earlier.list()).toEqual([id]);
  expect((await store.list()).sort()).toEqual([id, fresh].sort());
  await store.delete(id);
  expect(await earlier.list()).toEqual([]);
  expect(await store.list()).toEqual([fresh]);
});
