import { hostPaths, type HostError } from '@host/host-core';
import { FilePendingUpdateStore, JsonRegistryStore } from '@host/host-store';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PluginInstaller } from './installer';
import { ATTACK_CORPUS } from './testing/attack-corpus';
import { snapshotTree } from './testing/tree-snapshot';
import { testManifest, testPackage } from './testing/zip-writer';
import { createUnavailableRuntime } from './testing/unavailable-runtime';

describe('archive-attack corpus', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'corpus-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('has at least 30 cases', () => expect(ATTACK_CORPUS.length).toBeGreaterThanOrEqual(30));

  // Each case runs against a fresh data directory and against one where the plugin is installed (the update path).
  describe.each([
    ['a fresh data directory', false],
    ['a data directory with the plugin installed', true],
  ])('into %s', (_label, preinstall) => {
    let dataDir: string;
    let store: JsonRegistryStore;
    beforeAll(async () => {
      dataDir = mkdtempSync(join(root, 'data-'));
      store = await JsonRegistryStore.open(hostPaths(dataDir).stateDir);
      const setup = new PluginInstaller({
        paths: hostPaths(dataDir),
        store,
        pendingUpdates: new FilePendingUpdateStore(join(hostPaths(dataDir).stateDir, 'pending')),
        runtime: createUnavailableRuntime(),
      });
      await setup.init();
      if (preinstall) await setup.install(testPackage({ manifest: testManifest({ version: '0.9.0' }) }));
    });
    afterAll(() => store.close());

    it.each(ATTACK_CORPUS.map((c) => [c.name, c] as const))('refuses %s', async (_name, c) => {
      const installer = new PluginInstaller({
        paths: hostPaths(dataDir),
        store,
        pendingUpdates: new FilePendingUpdateStore(join(hostPaths(dataDir).stateDir, 'pending')),
        runtime: createUnavailableRuntime(),
        limits: c.limits,
      });
      const before = snapshotTree(dataDir);
      const archive = c.archive();
      const err = (await installer.install(archive).then(
        () => undefined,
        (e: unknown) => e,
      )) as HostError | undefined;
      expect(err?.code).toBe(c.code);
      expect(err?.message.length).toBeGreaterThan(20);
      expect(snapshotTree(dataDir)).toEqual(before);
    });
  });
});
