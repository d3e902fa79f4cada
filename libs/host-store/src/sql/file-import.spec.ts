import { hostPaths, type EventRecord, type HostPaths, type HttpPluginRecord } from '@host/host-core';
import { mkdtempSync, promises as fs, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileEventLogStore } from '../file-event-log-store';
import { FilePendingUpdateStore } from '../file-pending-update-store';
import { FileSettingsStore } from '../file-settings-store';
import { JsonRegistryStore } from '../json-registry-store';
import { contractDelivery, contractEvent } from '../testing/event-log-store-contract';
import { contractRecord } from '../testing/registry-store-contract';
import { FILE_IMPORT_META, HOST_KEY_ID_META, openSqlStores } from './open-sql-stores';
import { HostKeyMismatchError } from './secret-box';

// A data directory the file store left, opened with the SQL store (embedded, in the same directory): imported once.
describe('openSqlStores on a data directory of the file store', () => {
  let paths: HostPaths;
  beforeEach(() => {
    paths = hostPaths(mkdtempSync(join(tmpdir(), 'host-import-')));
  });
  afterEach(() => rmSync(paths.dataDir, { recursive: true, force: true }));

  const web: HttpPluginRecord = {
    pluginId: 'com.example.web',
    transport: 'http',
    installedAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    enabled: true,
    baseUrl: 'http://127.0.0.1:9/',
    signingSecret: 'secret-of-web',
    manifest: { pluginId: 'com.example.web', version: '1.0.0' } as HttpPluginRecord['manifest'],
  };

  async function writeFileStore(): Promise<EventRecord> {
    const registry = await JsonRegistryStore.open(paths.stateDir);
    await registry.put(contractRecord('com.example.echo', '1.2.3', { enabled: true }));
    await registry.put(web);
    await registry.setMeta('adminTokenHash', 'hash-of-token');
    await registry.close();
    await new FileSettingsStore(paths).update('com.example.echo', () => ({ greeting: 'hi', apiKey: 'k-123' }));
    await new FilePendingUpdateStore(join(paths.stateDir, 'pending')).save('0b7c5c3e-1', Buffer.from('zip bytes'), {
      pluginId: 'com.example.echo',
    });
    const events = await FileEventLogStore.open(join(paths.stateDir, 'events'));
    const running = contractEvent('e-running', ['com.example.echo']);
    running.deliveries.push(contractDelivery('com.example.echo', 'running'));
    events.append(contractEvent('e-done', ['com.example.echo']));
    events.append(running);
    await events.close();
    return running;
  }

  it('imports the registry, meta, settings, pending updates and event log once, and leaves the files as they were', async () => {
    await writeFileStore();
    const registryBefore = await fs.readFile(join(paths.stateDir, 'registry.json'), 'utf8');
    const stores = await openSqlStores(paths);
    try {
      expect(stores.imported).toMatchObject({ plugins: 2, settings: 1, pendingUpdates: 1, events: 2 });
      expect(stores.db.kind).toBe('embedded');
      expect((await stores.registry.list()).map((r) => r.pluginId)).toEqual(['com.example.echo', 'com.example.web']);
      expect(await stores.registry.get('com.example.echo')).toEqual(contractRecord('com.example.echo', '1.2.3', { enabled: true }));
      expect(await stores.registry.get('com.example.web')).toEqual(web);
      expect(await stores.registry.getMeta('adminTokenHash')).toBe('hash-of-token');
      expect(await stores.settings.get('com.example.echo')).toEqual({ greeting: 'hi', apiKey: 'k-123' });
      expect(await stores.pendingUpdates.list()).toEqual(['0b7c5c3e-1']);
      expect(Buffer.from((await stores.pendingUpdates.readArchive('0b7c5c3e-1'))!).toString()).toBe('zip bytes');
      expect(stores.events.list().map((r) => r.eventId)).toEqual(['e-running', 'e-done']);
      // The file store's own reopen had already ended the delivery the stopped host left running.
      expect(stores.events.get('e-running')!.deliveries[0]!.state).toBe('interrupted');
      expect(JSON.parse((await stores.registry.getMeta(FILE_IMPORT_META))!)).toMatchObject({ plugins: 2 });
      expect(await stores.registry.getMeta(HOST_KEY_ID_META)).toBe(stores.box.keyId);
      // Secrets are sealed in the database.
      const raw = JSON.stringify(await stores.db.query('SELECT * FROM host_plugins, host_plugin_settings'));
      expect(raw).not.toContain('secret-of-web');
      expect(raw).not.toContain('k-123');
      // Changed after the import: a second start must not import again over it.
      await stores.registry.update('com.example.echo', (r) => ({ ...r, enabled: false }));
    } finally {
      await stores.close();
    }
    expect(await fs.readFile(join(paths.stateDir, 'registry.json'), 'utf8')).toBe(registryBefore);
    const again = await openSqlStores(paths);
    try {
      expect(again.imported).toBeUndefined();
      expect((await again.registry.get('com.example.echo'))!.enabled).toBe(false);
    } finally {
      await again.close();
    }
  }, 60_000);

  it('refuses to start with a host key other than the one that sealed the database, naming the problem', async () => {
    const stores = await openSqlStores(paths);
    await stores.close();
    await fs.writeFile(join(paths.stateDir, 'host.key'), 'ab'.repeat(32) + '\n');
    await expect(openSqlStores(paths)).rejects.toThrow(HostKeyMismatchError);
    await fs.writeFile(join(paths.stateDir, 'host.key'), 'not a key');
    await expect(openSqlStores(paths)).rejects.toThrow(/host key .* cannot be used: it does not hold 64 hex digits/);
  }, 60_000);
});
