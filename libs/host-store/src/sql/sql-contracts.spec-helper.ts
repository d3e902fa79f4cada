import { randomBytes } from 'node:crypto';
import type { SqlDatabase } from './database';
import { SecretBox } from './secret-box';
import { SqlEventLogStore } from './sql-event-log-store';
import { SqlPendingUpdateStore } from './sql-pending-update-store';
import { SqlRegistryStore } from './sql-registry-store';
import { SqlReplayStore } from './sql-replay-store';
import { SqlSettingsStore } from './sql-settings-store';
import { SqlPackageArchiveStore, sha256Hex, ArchiveDigestMismatchError } from './package-archive-store';
import { contractDelivery, contractEvent, describeEventLogStoreContract } from '../testing/event-log-store-contract';
import { SqlEventInbox } from './sql-event-inbox';
import type { MessageEvent } from '@host/protocol';
import { describePendingUpdateStoreContract } from '../testing/pending-update-store-contract';
import { describeRegistryStoreContract } from '../testing/registry-store-contract';
import { describeReplayStoreContract } from '../testing/replay-store-contract';
import { describeSettingsStoreContract } from '../testing/settings-store-contract';

const TABLES =
  'host_plugins, host_meta, host_plugin_settings, host_pending_updates, host_events, host_package_archives, host_package_archive_chunks, host_pending_update_chunks, host_event_inbox';

/** Empties every table, so each contract test starts from an empty store on the shared database. */
export async function emptyTables(db: SqlDatabase): Promise<void> {
  await db.query(`TRUNCATE ${TABLES}`);
}

/**
 * The store contracts against one database (embedded or a server): `open`
 * empties the tables and makes a store, `reopen` makes a new store on what
 * they hold, as a restarted host would.
 */
export function describeSqlStoreContracts(name: string, database: () => SqlDatabase): void {
  const box = new SecretBox(randomBytes(32));
  describeRegistryStoreContract(`SqlRegistryStore (${name})`, {
    open: async () => {
      await emptyTables(database());
      return new SqlRegistryStore(database(), box);
    },
    reopen: async () => new SqlRegistryStore(database(), box),
  });
  describeSettingsStoreContract(`SqlSettingsStore (${name})`, {
    open: async () => {
      await emptyTables(database());
      return new SqlSettingsStore(database(), box);
    },
    reopen: async () => new SqlSettingsStore(database(), box),
  });
  describePendingUpdateStoreContract(`SqlPendingUpdateStore (${name})`, {
    open: async () => {
      await emptyTables(database());
      return new SqlPendingUpdateStore(database());
    },
    reopen: async () => new SqlPendingUpdateStore(database()),
  });
  describeEventLogStoreContract(`SqlEventLogStore (${name})`, {
    open: async (capacity) => {
      await emptyTables(database());
      return SqlEventLogStore.open(database(), { capacity });
    },
    reopen: async (capacity) => SqlEventLogStore.open(database(), { capacity }),
  });

  describe(`SqlEventLogStore's table (${name})`, () => {
    const rows = async () =>
      (await database().query<{ event_id: string }>('SELECT event_id FROM host_events ORDER BY seq')).map((r) => r.event_id);

    it('holds at most a tenth more than the capacity, and is cut back to the newest ones', async () => {
      await emptyTables(database());
      const log = await SqlEventLogStore.open(database(), { capacity: 20, flushIntervalMilliseconds: 60_000 });
      const most: number[] = [];
      for (let i = 0; i < 45; i++) {
        log.append(contractEvent(`e${i}`, ['com.example.one']));
        await log.flush();
        most.push((await rows()).length);
      }
      await log.close();
      expect(Math.max(...most)).toBeLessThanOrEqual(22);
      const left = await rows();
      expect(left.length).toBeGreaterThanOrEqual(20);
      // Whatever was kept is the newest, in order.
      expect(left).toEqual(Array.from({ length: left.length }, (_, i) => `e${45 - left.length + i}`));
    }, 60_000);

    it('keeps a record written again in the same write as a cut that would have reached its old place', async () => {
      await emptyTables(database());
      const log = await SqlEventLogStore.open(database(), { capacity: 10, flushIntervalMilliseconds: 60_000 });
      for (let i = 0; i < 12; i++) log.append(contractEvent(`e${i}`, ['com.example.one']));
      await log.flush();
      // The oldest comes back (an event routed again) with the write that cuts the table past the newest 10.
      log.append(contractEvent('e0', ['com.example.one']));
      log.append(contractEvent('e12', ['com.example.one']));
      await log.close();
      expect(await rows()).toEqual(['e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8', 'e9', 'e10', 'e11', 'e0', 'e12']);
    });
  });

  describe(`SqlEventInbox (${name})`, () => {
    beforeEach(() => emptyTables(database()));
    const event = (id: string) => contractEvent(id).event as MessageEvent;

    it('keeps each event once, those accepted together in one write, and answers them oldest first per host', async () => {
      const inbox = new SqlEventInbox(database(), 'host');
      const other = new SqlEventInbox(database(), 'other');
      await Promise.all([inbox.add(event('a')), inbox.add(event('b')), inbox.add(event('a')), other.add(event('c'))]);
      expect((await inbox.unsettled()).map((e) => e.eventId).sort()).toEqual(['a', 'b']);
      expect(await inbox.size()).toBe(2);
      expect((await other.unsettled()).map((e) => e.eventId)).toEqual(['c']);
    });

    it('lets an event go in the write of its final record, and keeps it while its record is unfinished', async () => {
      const inbox = new SqlEventInbox(database(), 'host');
      await Promise.all([inbox.add(event('done')), inbox.add(event('open'))]);
      const log = await SqlEventLogStore.open(database(), { capacity: 10 });
      const done = contractEvent('done', ['com.example.one']);
      done.deliveries.push(contractDelivery('com.example.one', 'completed'));
      done.routedAt = done.completedAt = '2026-01-01T00:00:02.000Z';
      const open = contractEvent('open', ['com.example.one']);
      open.deliveries.push(contractDelivery('com.example.one', 'running'));
      log.append(done);
      log.append(open);
      await log.close();
      expect((await inbox.unsettled()).map((e) => e.eventId)).toEqual(['open']);
    });

    it('does not mark interrupted the deliveries of an event still in the inbox when the log is opened again', async () => {
      const inbox = new SqlEventInbox(database(), 'host');
      await inbox.add(event('kept'));
      const log = await SqlEventLogStore.open(database(), { capacity: 10 });
      for (const id of ['kept', 'lost']) {
        const r = contractEvent(id, ['com.example.one']);
        r.deliveries.push(contractDelivery('com.example.one', 'running'));
        log.append(r);
      }
      await log.close();
      const again = await SqlEventLogStore.open(database(), { capacity: 10 });
      expect(again.get('kept')!.deliveries[0]!.state).toBe('running');
      expect(again.get('lost')!.deliveries[0]!.state).toBe('interrupted');
      await again.close();
      expect((await inbox.unsettled()).map((e) => e.eventId)).toEqual(['kept']);
    });
  });

  let replayBounds: { maxEntries?: number } = {};
  describeReplayStoreContract(`SqlReplayStore (${name})`, {
    open: async (o = {}) => {
      await database().query('TRUNCATE host_webhook_replays');
      return new SqlReplayStore(database(), (replayBounds = o));
    },
    reopen: async () => new SqlReplayStore(database(), replayBounds),
    prune: async (store, nowMs) => (store as SqlReplayStore).prune(nowMs),
  });

  describe(`SqlPackageArchiveStore (${name})`, () => {
    beforeEach(() => emptyTables(database()));

    it('keeps an archive once under its SHA-256 and answers the same bytes', async () => {
      const archives = new SqlPackageArchiveStore(database());
      const bytes = randomBytes(100_000);
      const digest = await archives.put(bytes);
      expect(digest).toBe(sha256Hex(bytes));
      expect(await archives.put(bytes)).toBe(digest);
      expect(Buffer.from((await archives.get(digest))!)).toEqual(bytes);
      expect(await archives.has(digest)).toBe(true);
      expect(await archives.get('0'.repeat(64))).toBeUndefined();
      expect(await archives.get('../not-a-digest')).toBeUndefined();
      expect((await database().query<{ n: number }>('SELECT count(*)::int AS n FROM host_package_archives'))[0]!.n).toBe(1);
    });

    it('keeps an archive in bounded chunks, written together and read one at a time', async () => {
      const archives = new SqlPackageArchiveStore(database(), 4096);
      const bytes = randomBytes(4096 * 5 + 17);
      const digest = await archives.put(bytes);
      const chunks = await database().query<{ n: number; size: number }>(
        'SELECT n, length(bytes)::int AS size FROM host_package_archive_chunks WHERE sha256 = $1 ORDER BY n',
        [digest],
      );
      expect(chunks).toEqual([0, 1, 2, 3, 4, 5].map((n) => ({ n, size: n < 5 ? 4096 : 17 })));
      expect(Buffer.from((await new SqlPackageArchiveStore(database()).get(digest))!)).toEqual(bytes);
      expect(await archives.retainOnly(new Set())).toBe(1);
      expect((await database().query<{ n: number }>('SELECT count(*)::int AS n FROM host_package_archive_chunks'))[0]!.n).toBe(0);
      // An empty archive is kept too (no chunk at all).
      expect(Buffer.from((await archives.get(await archives.put(new Uint8Array(0))))!)).toEqual(Buffer.alloc(0));
    });

    it('keeps the archive of a pending update in chunks too, and reads one saved whole before them', async () => {
      const pending = new SqlPendingUpdateStore(database());
      const bytes = randomBytes(2 * 1024 * 1024 + 5);
      await pending.save('update-1', bytes, { pluginId: 'com.example.a' });
      const chunks = await database().query<{ n: number }>('SELECT n FROM host_pending_update_chunks WHERE id = $1 ORDER BY n', [
        'update-1',
      ]);
      expect(chunks.map((c) => c.n)).toEqual([0, 1, 2]);
      expect(Buffer.from((await pending.readArchive('update-1'))!).equals(bytes)).toBe(true);
      // Saved again under the same id, only the new pieces are left.
      await pending.save('update-1', Buffer.from('smaller'), { pluginId: 'com.example.a' });
      expect(Buffer.from((await pending.readArchive('update-1'))!).toString()).toBe('smaller');
      await pending.delete('update-1');
      expect((await database().query<{ n: number }>('SELECT count(*)::int AS n FROM host_pending_update_chunks'))[0]!.n).toBe(0);
      await database().query('INSERT INTO host_pending_updates (id, archive, description) VALUES ($1, $2, $3)', [
        'update-2',
        Buffer.from('whole'),
        JSON.stringify({ pluginId: 'com.example.b' }),
      ]);
      expect(Buffer.from((await pending.readArchive('update-2'))!).toString()).toBe('whole');
    }, 30_000);

    it('reads archives a host stored as one value before the chunks', async () => {
      const bytes = randomBytes(10_000);
      await database().query('INSERT INTO host_package_archives (sha256, bytes, size) VALUES ($1, $2, $3)', [
        sha256Hex(bytes),
        bytes,
        bytes.length,
      ]);
      const archives = new SqlPackageArchiveStore(database());
      expect(await archives.has(sha256Hex(bytes))).toBe(true);
      expect(Buffer.from((await archives.get(sha256Hex(bytes)))!)).toEqual(bytes);
      // Put again, it stays as it is.
      expect(await archives.put(bytes)).toBe(sha256Hex(bytes));
      expect(await archives.retainOnly(new Set())).toBe(1);
    });

    it('refuses bytes that no longer match their digest', async () => {
      const archives = new SqlPackageArchiveStore(database(), 4);
      const digest = await archives.put(Buffer.from('first and second'));
      await database().query('UPDATE host_package_archive_chunks SET bytes = $1 WHERE n = 1', [Buffer.from('SECO')]);
      await expect(archives.get(digest)).rejects.toThrow(ArchiveDigestMismatchError);
      await database().query('DELETE FROM host_package_archive_chunks WHERE n = 2');
      await expect(archives.get(digest)).rejects.toThrow(ArchiveDigestMismatchError);
      const legacy = Buffer.from('legacy');
      await database().query('INSERT INTO host_package_archives (sha256, bytes, size) VALUES ($1, $2, $3)', [
        sha256Hex(legacy),
        Buffer.from('changed'),
        6,
      ]);
      await expect(archives.get(sha256Hex(legacy))).rejects.toThrow(ArchiveDigestMismatchError);
    });

    it('forgets every archive not in the set it is told to keep, except those stored within the grace period', async () => {
      const archives = new SqlPackageArchiveStore(database());
      const a = await archives.put(Buffer.from('a'));
      const b = await archives.put(Buffer.from('b'));
      expect(await archives.retainOnly(new Set([a]), 60_000)).toBe(0);
      expect(await archives.has(b)).toBe(true);
      expect(await archives.retainOnly(new Set([a]))).toBe(1);
      expect(await archives.has(a)).toBe(true);
      expect(await archives.has(b)).toBe(false);
    });
  });

  describe(`sealed secrets (${name})`, () => {
    beforeEach(() => emptyTables(database()));

    it('stores signing secrets and settings only sealed, and opens them with the same key only', async () => {
      const registry = new SqlRegistryStore(database(), box);
      await registry.put({
        pluginId: 'com.example.web',
        transport: 'http',
        installedAt: '2026-01-01T00:00:00.000Z',
        updatedAt: '2026-01-01T00:00:00.000Z',
        enabled: true,
        baseUrl: 'http://127.0.0.1:9/',
        signingSecret: 'the-signing-secret',
        manifest: { pluginId: 'com.example.web', version: '1.0.0' } as never,
      });
      const settings = new SqlSettingsStore(database(), box);
      await settings.update('com.example.web', () => ({ apiKey: 'the-api-key' }));
      const raw = JSON.stringify(await database().query(`SELECT * FROM host_plugins, host_plugin_settings`));
      expect(raw).not.toContain('the-signing-secret');
      expect(raw).not.toContain('the-api-key');
      expect(await registry.get('com.example.web')).toMatchObject({ signingSecret: 'the-signing-secret' });
      expect(await settings.get('com.example.web')).toEqual({ apiKey: 'the-api-key' });
      const otherKey = new SecretBox(randomBytes(32));
      await expect(new SqlRegistryStore(database(), otherKey).get('com.example.web')).rejects.toThrow(/sealed with another host key/);
      await expect(new SqlSettingsStore(database(), otherKey).get('com.example.web')).rejects.toThrow(/sealed with another host key/);
    });
  });
}
