import { HostError, hostPaths, type HostPaths, type PluginRuntime } from '@host/host-core';
import { FilePendingUpdateStore, JsonRegistryStore } from '@host/host-store';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PluginInstaller, type InstallerOptions, type InstallStep } from './installer';
import type { PendingUpdate } from './pending-updates';
import { snapshotTree } from './testing/tree-snapshot';
import { buildZip, testManifest, testPackage } from './testing/zip-writer';
import { createUnavailableRuntime } from './testing/unavailable-runtime';

const ID = 'com.example.echo';

function pkg(version: string, overrides: Record<string, unknown> = {}, indexJs = `// v${version}\n`): Buffer {
  return testPackage({ manifest: testManifest({ version, ...overrides }), indexJs });
}

async function pendingOf(p: Promise<unknown>): Promise<PendingUpdate> {
  const e = (await p.then(
    () => undefined,
    (err: unknown) => err,
  )) as HostError;
  expect(e?.code).toBe('UPDATE_CONFIRMATION_REQUIRED');
  return (e.details as { pendingUpdate: PendingUpdate }).pendingUpdate;
}

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  return p.then(
    () => undefined,
    (e: { code?: string }) => e.code,
  );
}

describe('PluginInstaller', () => {
  let dataDir: string;
  let paths: HostPaths;
  let store: JsonRegistryStore;
  const stores: JsonRegistryStore[] = [];

  async function make(extra: Partial<InstallerOptions> = {}): Promise<PluginInstaller> {
    store = await JsonRegistryStore.open(paths.stateDir);
    stores.push(store);
    const inst = new PluginInstaller({
      paths,
      store,
      pendingUpdates: new FilePendingUpdateStore(join(paths.stateDir, 'pending')),
      runtime: createUnavailableRuntime(),
      ...extra,
    });
    await inst.init();
    return inst;
  }

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'installer-'));
    paths = hostPaths(dataDir);
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses a Node package without its node_modules even when the data directory sits under one that has them', async () => {
    // The host's checkout: a node_modules with the SDK, and the data directory inside it.
    mkdirSync(join(dataDir, 'node_modules', '@host', 'plugin-sdk-v2'), { recursive: true });
    writeFileSync(join(dataDir, 'node_modules', '@host', 'plugin-sdk-v2', 'package.json'), '{"name": "@host/plugin-sdk-v2"}');
    paths = hostPaths(join(dataDir, 'data'));
    const inst = await make();
    const zip = testPackage({
      indexJs: "require('@host/plugin-sdk-v2');\n",
      extra: [{ name: 'package.json', data: JSON.stringify({ name: 'echo', dependencies: { '@host/plugin-sdk-v2': '^2.0.0' } }) }],
    });
    const e = (await inst.install(zip).then(
      () => undefined,
      (err: unknown) => err,
    )) as HostError;
    expect(e).toMatchObject({ code: 'INSTALL_DEPENDENCY_MISSING', details: { missing: ['@host/plugin-sdk-v2'] } });
    expect(e.message).toContain('"@host/plugin-sdk-v2"');
    expect(existsSync(paths.packageDir(ID))).toBe(false);
    expect(await store.get(ID)).toBeUndefined();
  });

  it('installs the root layout into plugins-v2/<pluginId>/ and registers it', async () => {
    const inst = await make();
    const goBinary = buildZip([
      {
        name: 'manifest.json',
        data: JSON.stringify(
          testManifest({ transport: { type: 'stdio-jsonrpc', stdio: { command: './bin/echo', args: ['--host-stdio'] } } }),
        ),
      },
      { name: 'bin/', unixMode: 0o040755 },
      { name: 'bin/echo', data: 'ELF', unixMode: 0o100644 },
      { name: 'lib/util.js', data: 'x', method: 0 },
    ]);
    const r = await inst.install(goBinary);
    expect(r.started).toBe(false);
    expect(readdirSync(paths.packageDir(ID)).sort()).toEqual(['bin', 'lib', 'manifest.json']);
    // The native start command is made executable even though the ZIP did not say so.
    expect(statSync(join(paths.packageDir(ID), 'bin/echo')).mode & 0o111).not.toBe(0);
    expect(statSync(join(paths.packageDir(ID), 'lib/util.js')).mode & 0o111).toBe(0);
    const rec = await store.get(ID);
    expect(rec).toMatchObject({ pluginId: ID, transport: 'stdio-jsonrpc', enabled: false, packageSha256: r.record.packageSha256 });
    for (const d of [paths.dataDirOf(ID), paths.configDirOf(ID), paths.cacheDirOf(ID)]) expect(existsSync(d)).toBe(true);
    expect(readdirSync(paths.stagingRoot)).toEqual([]);
  });

  it('normalises the single-folder layout and ignores __MACOSX', async () => {
    const inst = await make();
    const zip = buildZip([
      { name: `${ID}/`, unixMode: 0o040755 },
      { name: `${ID}/manifest.json`, data: JSON.stringify(testManifest()) },
      { name: `${ID}/index.js`, data: 'x' },
      { name: `__MACOSX/${ID}/._index.js`, data: 'resource fork' },
    ]);
    await inst.install(zip);
    expect(readdirSync(paths.packageDir(ID)).sort()).toEqual(['index.js', 'manifest.json']);
  });

  it('reports startAfterInstall failures without undoing the install', async () => {
    const inst = await make();
    const r = await inst.install(pkg('1.0.0'), { startAfterInstall: true });
    expect(r.started).toBe(false);
    expect(r.startError?.code).toBe('RUNTIME_UNAVAILABLE');
    expect(await store.get(ID)).toBeDefined();
  });

  it('turns a second upload of the same pluginId into a pending update with the differences', async () => {
    const inst = await make();
    await inst.install(pkg('1.0.0'));
    const before = snapshotTree(paths.packagesRoot);
    const p = await pendingOf(
      inst.install(
        pkg('1.1.0', {
          permissions: ['messages.reply', 'messages.send'],
          commands: [
            { name: 'echo', prefixes: ['!'] },
            { name: 'ping', prefixes: ['/'] },
          ],
          transport: { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['index.js', '--host-stdio', '--verbose'] } },
        }),
      ),
    );
    expect(p.installed.version).toBe('1.0.0');
    expect(p.incoming.version).toBe('1.1.0');
    expect(p.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(p.changes).toEqual({
      versionChanged: true,
      versionOrder: 'upgrade',
      identicalPackage: false,
      permissionsAdded: ['messages.send'],
      permissionsRemoved: [],
      commandsAdded: ['ping'],
      commandsRemoved: [],
      commandsChanged: ['echo'],
      startCommandChanged: true,
    });
    // Nothing changes until the operator confirms.
    expect(snapshotTree(paths.packagesRoot)).toEqual(before);
    expect((await inst.getPendingUpdate(p.id)).id).toBe(p.id);
  });

  it('tells an identical upload and a downgrade from an upgrade', async () => {
    const inst = await make();
    await inst.install(pkg('1.2.0'));
    const same = await pendingOf(inst.install(pkg('1.2.0')));
    expect(same.changes).toMatchObject({ versionChanged: false, versionOrder: 'same', identicalPackage: true });
    await inst.cancelUpdate(same.id);
    const older = await pendingOf(inst.install(pkg('1.10.0-beta.1', { description: 'older? no: 1.10 > 1.2' })));
    expect(older.changes).toMatchObject({ versionOrder: 'upgrade', identicalPackage: false });
    await inst.cancelUpdate(older.id);
    const down = await pendingOf(inst.install(pkg('1.1.9')));
    expect(down.changes).toMatchObject({ versionChanged: true, versionOrder: 'downgrade', identicalPackage: false });
  });

  it('confirms an update: backup of the old version, data and config untouched', async () => {
    const inst = await make();
    await inst.install(pkg('1.0.0'));
    writeFileSync(join(paths.dataDirOf(ID), 'state.db'), 'precious');
    writeFileSync(join(paths.configDirOf(ID), 'settings.json'), '{"a":1}');
    const p = await pendingOf(inst.install(pkg('2.0.0')));
    const r = await inst.confirmUpdate(p.id);
    expect(r.record.manifest.version).toBe('2.0.0');
    expect(readFileSync(join(paths.packageDir(ID), 'index.js'), 'utf8')).toBe('// v2.0.0\n');
    const backups = await inst.backups(ID);
    expect(backups.map((b) => b.version)).toEqual(['1.0.0']);
    expect(readFileSync(join(backups[0]!.path, 'index.js'), 'utf8')).toBe('// v1.0.0\n');
    expect(readFileSync(join(paths.dataDirOf(ID), 'state.db'), 'utf8')).toBe('precious');
    expect(readFileSync(join(paths.configDirOf(ID), 'settings.json'), 'utf8')).toBe('{"a":1}');
    expect(await codeOf(inst.confirmUpdate(p.id))).toBe('PENDING_UPDATE_NOT_FOUND');
  });

  it('cancels a pending update', async () => {
    const inst = await make();
    await inst.install(pkg('1.0.0'));
    const p = await pendingOf(inst.install(pkg('2.0.0')));
    await inst.cancelUpdate(p.id);
    expect(await codeOf(inst.confirmUpdate(p.id))).toBe('PENDING_UPDATE_NOT_FOUND');
    expect(readdirSync(join(paths.stateDir, 'pending'))).toEqual([]);
    expect((await store.get(ID))!.manifest.version).toBe('1.0.0');
  });

  it('refuses a pending update once the installed version changed', async () => {
    const inst = await make();
    await inst.install(pkg('1.0.0'));
    const a = await pendingOf(inst.install(pkg('2.0.0')));
    const b = await pendingOf(inst.install(pkg('3.0.0')));
    await inst.confirmUpdate(b.id);
    expect(await codeOf(inst.confirmUpdate(a.id))).toBe('PENDING_UPDATE_STALE');
    expect((await store.get(ID))!.manifest.version).toBe('3.0.0');
  });

  it('refuses with INSTALL_PLUGIN_RUNNING when the running plugin does not stop, changing nothing; the update stays pending', async () => {
    let stops = 0;
    // A plugin that is running and ignores the stop of the update.
    const stubborn: PluginRuntime = {
      ...createUnavailableRuntime(),
      isRunning: () => true,
      stop: async () => {
        stops++;
        return { state: 'running', crashCount: 0 };
      },
      start: async () => {
        throw new Error('start must not be called: the plugin never stopped');
      },
    };
    const inst = await make();
    await inst.install(pkg('1.0.0'));
    const p = await pendingOf(inst.install(pkg('2.0.0')));
    const before = snapshotTree(paths.packagesRoot);
    const refusing = new PluginInstaller({
      paths,
      store,
      pendingUpdates: new FilePendingUpdateStore(join(paths.stateDir, 'pending')),
      runtime: stubborn,
    });
    const e = (await refusing.confirmUpdate(p.id).catch((err: unknown) => err)) as HostError;
    expect(e).toBeInstanceOf(HostError);
    expect(e.code).toBe('INSTALL_PLUGIN_RUNNING');
    expect(e.status).toBe(409);
    expect(stops).toBe(1);
    expect(snapshotTree(paths.packagesRoot)).toEqual(before);
    expect(await inst.backups(ID)).toEqual([]);
    expect((await store.get(ID))!.manifest.version).toBe('1.0.0');
    // Once the plugin is stopped, the same pending update applies.
    expect((await inst.confirmUpdate(p.id)).record.manifest.version).toBe('2.0.0');
  });

  it('keeps at most 3 pending updates per plugin, replacing the oldest', async () => {
    const inst = await make();
    await inst.install(pkg('1.0.0'));
    const ids: string[] = [];
    for (const v of ['2.0.0', '3.0.0', '4.0.0', '5.0.0', '6.0.0']) ids.push((await pendingOf(inst.install(pkg(v)))).id);
    expect(
      readdirSync(join(paths.stateDir, 'pending'))
        .filter((f) => f.endsWith('.zip'))
        .sort(),
    ).toEqual(
      ids
        .slice(2)
        .map((id) => `${id}.zip`)
        .sort(),
    );
    expect(await codeOf(inst.confirmUpdate(ids[0]!))).toBe('PENDING_UPDATE_NOT_FOUND');
    await inst.confirmUpdate(ids[4]!);
    expect((await store.get(ID))!.manifest.version).toBe('6.0.0');
  });

  it('keeps a bounded number of pending updates across all plugins, replacing the oldest of any', async () => {
    const inst = await make({ maxPendingUpdates: { perPlugin: 3, total: 3 } });
    const ids = ['com.example.one', 'com.example.two', 'com.example.three', 'com.example.four'];
    for (const pluginId of ids) await inst.install(pkg('1.0.0', { pluginId }));
    const pending: string[] = [];
    for (const pluginId of ids) pending.push((await pendingOf(inst.install(pkg('2.0.0', { pluginId })))).id);
    const kept = readdirSync(join(paths.stateDir, 'pending')).filter((f) => f.endsWith('.zip'));
    expect(kept.sort()).toEqual(
      pending
        .slice(1)
        .map((id) => `${id}.zip`)
        .sort(),
    );
    expect(await codeOf(inst.confirmUpdate(pending[0]!))).toBe('PENDING_UPDATE_NOT_FOUND');
  });

  it('refuses a pending update whose stored archive was altered, and one that expired', async () => {
    let now = Date.parse('2024-01-01T00:00:00Z');
    const inst = await make({ now: () => new Date(now) });
    await inst.install(pkg('1.0.0'));
    const a = await pendingOf(inst.install(pkg('2.0.0')));
    writeFileSync(join(paths.stateDir, 'pending', `${a.id}.zip`), pkg('6.6.6'));
    expect(await codeOf(inst.confirmUpdate(a.id))).toBe('PENDING_UPDATE_STALE');
    const b = await pendingOf(inst.install(pkg('2.0.0')));
    now += 61 * 60 * 1000;
    expect(await codeOf(inst.confirmUpdate(b.id))).toBe('PENDING_UPDATE_NOT_FOUND');
    expect((await store.get(ID))!.manifest.version).toBe('1.0.0');
  });

  it.each(['extracted', 'journal-written', 'old-moved', 'new-moved'] as InstallStep[])(
    'restores the previous version when the update fails after "%s"',
    async (failAt) => {
      let armed = false;
      const inst = await make({
        onStep: (s) => {
          if (armed && s === failAt) throw new Error(`forced failure at ${s}`);
        },
      });
      await inst.install(pkg('1.0.0'));
      const before = snapshotTree(paths.packagesRoot);
      const registryBefore = await store.get(ID);
      const p = await pendingOf(inst.install(pkg('2.0.0')));
      armed = true;
      const err = (await inst.confirmUpdate(p.id).catch((e: unknown) => e)) as HostError;
      expect(err.code).toBe('INSTALL_FAILED');
      expect(snapshotTree(paths.packagesRoot)).toEqual(before);
      expect(await store.get(ID)).toEqual(registryBefore);
      expect(existsSync(join(paths.stateDir, 'install-journal.json'))).toBe(false);
      expect(readdirSync(paths.stagingRoot)).toEqual([]);
    },
  );

  it('keeps the newest three backups', async () => {
    const inst = await make();
    await inst.install(pkg('1.0.0'));
    for (const v of ['1.1.0', '1.2.0', '1.3.0', '1.4.0', '1.5.0']) await inst.confirmUpdate((await pendingOf(inst.install(pkg(v)))).id);
    expect((await inst.backups(ID)).map((b) => b.version)).toEqual(['1.4.0', '1.3.0', '1.2.0']);
  });

  it('uninstalls into a backup and keeps data until the explicit delete', async () => {
    const inst = await make();
    await inst.install(pkg('1.0.0'));
    writeFileSync(join(paths.dataDirOf(ID), 'state.db'), 'precious');
    const { backup } = await inst.uninstall(ID);
    expect(existsSync(paths.packageDir(ID))).toBe(false);
    expect(existsSync(join(backup!, 'manifest.json'))).toBe(true);
    expect(await store.get(ID)).toBeUndefined();
    expect(readFileSync(join(paths.dataDirOf(ID), 'state.db'), 'utf8')).toBe('precious');
    // Reinstalling finds the data where it was.
    await inst.install(pkg('1.0.0'));
    expect(readFileSync(join(paths.dataDirOf(ID), 'state.db'), 'utf8')).toBe('precious');
    await inst.deleteData(ID);
    expect(existsSync(join(dataDir, 'plugin-data', ID))).toBe(false);
    expect(await codeOf(inst.uninstall('com.example.none'))).toBe('PLUGIN_NOT_FOUND');
    expect(await codeOf(inst.deleteData('../state'))).toBe('PLUGIN_NOT_FOUND');
    expect(await codeOf(inst.uninstall('..'))).toBe('PLUGIN_NOT_FOUND');
    expect(existsSync(paths.stateDir)).toBe(true);
  });

  it('refuses a pluginId that belongs to an HTTP plugin', async () => {
    const inst = await make();
    await store.put({
      pluginId: ID,
      transport: 'http',
      baseUrl: 'https://example.com',
      signingSecret: 's',
      enabled: true,
      installedAt: '',
      updatedAt: '',
      manifest: {} as never,
    });
    expect(await codeOf(inst.install(pkg('1.0.0')))).toBe('INSTALL_ID_TAKEN');
  });

  // A writer that bypasses the plugin's lock (another host on a shared registry, say) must not
  // have its record overwritten: the registry write itself only takes a free id.
  it('rolls back an install whose id was registered by someone else before its registry write', async () => {
    const http = {
      pluginId: ID,
      transport: 'http',
      baseUrl: 'https://example.com',
      signingSecret: 's',
      enabled: true,
      installedAt: '',
      updatedAt: '',
      manifest: {} as never,
    } as const;
    const inst = await make({
      onStep: async (step) => {
        if (step === 'new-moved') await store.put(http);
      },
    });
    const err = await inst.install(pkg('1.0.0')).catch((e: HostError) => e);
    expect(err).toMatchObject({
      code: 'INSTALL_ID_TAKEN',
      message: expect.stringMatching(/HTTP plugin registration .*nothing was installed/),
    });
    expect(await store.get(ID)).toEqual(http);
    expect(existsSync(paths.packageDir(ID))).toBe(false);
    expect(readdirSync(paths.stagingRoot)).toEqual([]);
  });

  it('keeps an enable made during an update swap, and the update too', async () => {
    let enableDuringSwap = false;
    const inst = await make({
      onStep: async (step) => {
        if (enableDuringSwap && step === 'new-moved') await store.update(ID, (r) => ({ ...r, enabled: true }));
      },
    });
    await inst.install(pkg('1.0.0'));
    const pending = await pendingOf(inst.install(pkg('2.0.0')));
    enableDuringSwap = true;
    const r = await inst.confirmUpdate(pending.id);
    expect(r.record).toMatchObject({ enabled: true, manifest: { version: '2.0.0' }, packageSha256: pending.sha256 });
    expect(await store.get(ID)).toEqual(r.record);
  });

  it('discovers packages on start: invalid ones are listed, hand-copied valid ones adopted, nothing executed', async () => {
    mkdirSync(join(paths.packagesRoot, 'com.example.broken'), { recursive: true });
    writeFileSync(
      join(paths.packagesRoot, 'com.example.broken', 'manifest.json'),
      '{"pluginId": "com.example.broken", "protocolVersion": 1}',
    );
    mkdirSync(join(paths.packagesRoot, 'com.example.nomanifest'), { recursive: true });
    mkdirSync(join(paths.packagesRoot, ID), { recursive: true });
    writeFileSync(join(paths.packagesRoot, ID, 'manifest.json'), JSON.stringify(testManifest()));
    const inst = await make();
    const invalid = inst.invalidPackages();
    expect(invalid.map((i) => i.pluginId)).toEqual(['com.example.broken', 'com.example.nomanifest']);
    expect(invalid[0]!.state).toBe('invalidManifest');
    expect(invalid[0]!.issues.map((i) => i.code)).toContain('manifest.protocolVersion.unsupported');
    expect((await store.get(ID))?.manifest.version).toBe('1.0.0');
    // Installing a valid package over an invalid folder replaces it (and keeps the old folder as a backup).
    await inst.install(testPackage({ manifest: testManifest({ pluginId: 'com.example.broken' }) }));
    expect(inst.invalidPackages().map((i) => i.pluginId)).toEqual(['com.example.nomanifest']);
    expect((await inst.backups('com.example.broken')).length).toBe(1);
  });

  describe('after a crash', () => {
    // A step that never returns stands for the process dying there: nothing after it runs.
    // The restart waits until that step is reached (a fixed sleep was too short on a busy machine).
    function crashAt(step: InstallStep) {
      let reached!: () => void;
      const crashed = new Promise<void>((r) => (reached = r));
      let armed = false;
      return {
        crashed,
        arm: () => (armed = true),
        onStep: (s: InstallStep) => {
          if (!armed || s !== step) return undefined;
          reached();
          return new Promise<void>(() => undefined);
        },
      };
    }

    it.each(['extracted', 'journal-written', 'old-moved', 'new-moved', 'registry-written'] as InstallStep[])(
      'an update interrupted after "%s" ends as the old or the new version on restart',
      async (step) => {
        const crash = crashAt(step);
        const inst = await make({ onStep: crash.onStep });
        await inst.install(pkg('1.0.0'));
        const p = await pendingOf(inst.install(pkg('2.0.0')));
        crash.arm();
        void inst.confirmUpdate(p.id);
        await crash.crashed;
        const restarted = await make();
        const version = (await store.get(ID))!.manifest.version;
        const onDisk = JSON.parse(readFileSync(join(paths.packageDir(ID), 'manifest.json'), 'utf8')).version;
        expect(onDisk).toBe(version);
        expect(readFileSync(join(paths.packageDir(ID), 'index.js'), 'utf8')).toBe(`// v${version}\n`);
        expect(version).toBe(step === 'new-moved' || step === 'registry-written' ? '2.0.0' : '1.0.0');
        expect(readdirSync(paths.stagingRoot)).toEqual([]);
        expect(existsSync(join(paths.stateDir, 'install-journal.json'))).toBe(false);
        expect(restarted.invalidPackages()).toEqual([]);
      },
    );

    it('a fresh install interrupted before the registry write is completed on restart', async () => {
      const crash = crashAt('new-moved');
      const inst = await make({ onStep: crash.onStep });
      crash.arm();
      void inst.install(pkg('1.0.0'));
      await crash.crashed;
      expect(await store.get(ID)).toBeUndefined();
      await make();
      expect((await store.get(ID))!.manifest.version).toBe('1.0.0');
    });
  });
});
