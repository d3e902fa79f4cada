import { hostPaths, KeyedLock, type HostError, type PluginLock, type PluginRuntime, type RuntimeStatus } from '@host/host-core';
import { PluginInstaller, type PendingUpdate } from '@host/host-installer';
import { testManifest, testPackage } from '@host/host-installer/testing';
import { FilePendingUpdateStore, FileSettingsStore, JsonRegistryStore } from '@host/host-store';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp } from './app';
import { ensureAdminToken } from './auth';

// Start and stop of a stdio plugin wait for its process; whatever else
// changes the plugin's record meanwhile (a confirmed update above all) must
// survive the `enabled` flag the route writes afterwards.
const ID = 'com.example.echo';
const pkg = (version: string) => testPackage({ manifest: testManifest({ version }), indexJs: `// v${version}\n` });

/** A runtime whose start waits until the test lets it finish. */
function gatedRuntime() {
  const running = new Set<string>();
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let entered!: () => void;
  const startEntered = new Promise<void>((r) => (entered = r));
  const status = (id: string): RuntimeStatus => ({ state: running.has(id) ? 'running' : 'stopped', crashCount: 0 });
  const runtime: PluginRuntime = {
    async start(id) {
      entered();
      await gate;
      running.add(id);
      return status(id);
    },
    async stop(id) {
      running.delete(id);
      return status(id);
    },
    async restart(id) {
      running.add(id);
      return status(id);
    },
    status: (id) => (running.has(id) ? status(id) : undefined),
    isRunning: (id) => running.has(id),
    stopAll: async () => running.clear(),
  };
  return { runtime, startEntered, finishStart: () => open() };
}

/** The host's lock, telling the test when someone asks for a plugin id. */
function observedLock() {
  const lock = new KeyedLock();
  const waiters: (() => void)[] = [];
  const observed: PluginLock = {
    run(id, work) {
      for (const w of waiters.splice(0)) w();
      return lock.run(id, work);
    },
  };
  return { lock: observed, nextRequest: () => new Promise<void>((r) => waiters.push(r)) };
}

describe('plugin lifecycle routes and concurrent writers', () => {
  let dataDir: string;
  let store: JsonRegistryStore;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'api-races-'));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function setUp() {
    const paths = hostPaths(dataDir);
    store = await JsonRegistryStore.open(paths.stateDir);
    const gated = gatedRuntime();
    const locks = observedLock();
    const installer = new PluginInstaller({
      paths,
      store,
      pendingUpdates: new FilePendingUpdateStore(join(paths.stateDir, 'pending')),
      runtime: gated.runtime,
      locks: locks.lock,
    });
    await installer.init();
    const { hash, generated } = await ensureAdminToken(store);
    const app = createApp({
      paths,
      store,
      settings: new FileSettingsStore(paths),
      installer,
      runtime: gated.runtime,
      locks: locks.lock,
      adminTokenHash: hash,
    });
    const call = (method: 'post' | 'get', path: string) => request(app)[method](path).set('Authorization', `Bearer ${generated}`);
    return { ...gated, ...locks, installer, call };
  }

  it('keeps a record change made while the plugin was starting (start writes only enabled)', async () => {
    const h = await setUp();
    await h.installer.install(pkg('1.0.0'));
    const starting = h.call('post', `/api/plugins/${ID}/start`).then((r) => r);
    await h.startEntered;
    // A writer that does not take the plugin's lock: the store alone must keep its change.
    await store.update(ID, (r) => ({ ...r, packageSha256: 'cd'.repeat(32), manifest: { ...r.manifest, version: '1.0.1' } }) as typeof r);
    h.finishStart();
    expect((await starting).status).toBe(200);
    expect(await store.get(ID)).toMatchObject({ enabled: true, packageSha256: 'cd'.repeat(32), manifest: { version: '1.0.1' } });
  });

  it('applies an update confirmed while the plugin was starting after the start, and keeps both', async () => {
    const h = await setUp();
    await h.installer.install(pkg('1.0.0'));
    const refused = await h.installer.install(pkg('2.0.0')).then(
      () => undefined,
      (e: HostError) => e,
    );
    const pending = (refused?.details as { pendingUpdate: PendingUpdate }).pendingUpdate;
    const starting = h.call('post', `/api/plugins/${ID}/start`).then((r) => r);
    await h.startEntered;
    const confirmAsksForLock = h.nextRequest();
    const confirming = h
      .call('post', `/api/plugins/packages/pending/${pending.id}/confirm`)
      .send({})
      .then((r) => r);
    // Either the confirmation finishes now (nothing orders it after the start) or it waits for the plugin's lock.
    await Promise.race([confirming, confirmAsksForLock]);
    h.finishStart();
    expect((await starting).status).toBe(200);
    expect((await confirming).status).toBe(200);
    expect(await store.get(ID)).toMatchObject({ enabled: true, packageSha256: pending.sha256, manifest: { version: '2.0.0' } });
    expect(h.runtime.isRunning(ID)).toBe(true);
  });

  it('does not bring back a plugin removed from the registry while it was starting', async () => {
    const h = await setUp();
    await h.installer.install(pkg('1.0.0'));
    const starting = h.call('post', `/api/plugins/${ID}/start`).then((r) => r);
    await h.startEntered;
    await store.delete(ID);
    h.finishStart();
    const res = await starting;
    expect(res.body.error?.code).toBe('PLUGIN_NOT_FOUND');
    expect(await store.get(ID)).toBeUndefined();
  });
});
