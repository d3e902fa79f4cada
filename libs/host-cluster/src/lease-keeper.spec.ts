import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostPaths } from '@host/host-core';
import { Dispatcher } from '@host/host-dispatch';
import { FilePluginLogStore, StdioPluginRuntime } from '@host/host-runtime';
import { openSqlStores, type SqlStores } from '@host/host-store';
import { contractRecord } from '@host/host-store/testing';
import { parseStdioManifest } from '@host/protocol';
import { LeaseKeeper, type LeaseRoundHooks } from './lease-keeper';
import { SqlLeases } from './sql-leases';

const PLUGIN = 'com.example.kept';

// The lease keeper alone, on the embedded database: two keepers under two replica names stand for two replicas
// sharing it. Their rounds run only when the test asks (the timings are an hour); what a round hands to the other
// parts (its hooks) is what the test reads.
describe('the lease keeper', () => {
  let dir: string;
  let stores: SqlStores;
  const keepers: LeaseKeeper[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'host-cluster-keeper-'));
    stores = await openSqlStores(hostPaths(dir));
    await stores.registry.put(contractRecord(PLUGIN, '1.0.0', { enabled: true }));
  }, 60_000);

  afterAll(async () => {
    for (const k of keepers) await k.stopRounds();
    await stores?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function keeper(
    replica: string,
    renewMilliseconds = 3_600_000,
  ): { keeper: LeaseKeeper; read: string[][]; claimed: string[]; runtime: StdioPluginRuntime } {
    const read: string[][] = [];
    const claimed: string[] = [];
    const hooks: LeaseRoundHooks = {
      pluginsRead: (records) => void read.push([...records.keys()]),
      claim: (pluginId) => void claimed.push(pluginId),
      recheck: async () => undefined,
      adopted: async () => undefined,
      prune: async () => undefined,
    };
    const runtime = new StdioPluginRuntime({
      paths: hostPaths(dir),
      records: stores.registry,
      logs: new FilePluginLogStore(hostPaths(dir)),
      sink: new Dispatcher({ endpoints: () => [] }).outbound,
    });
    const k = new LeaseKeeper({
      replica,
      shared: true,
      leases: new SqlLeases(stores.db, replica),
      store: stores.registry,
      runtime: () => runtime,
      invalid: () => [],
      log: () => undefined,
      timings: { renewMilliseconds, ttlMilliseconds: 3_600_000 },
      hooks,
    });
    keepers.push(k);
    return { keeper: k, read, claimed, runtime };
  }

  it("lets one replica take a plugin an operator starts there, and shows the other the holder's status", async () => {
    const one = keeper('one');
    const two = keeper('two');
    await one.keeper.open();
    await two.keeper.open();
    // A round reads the enabled plugins for the queued endpoints; before the host's start it takes no lease.
    expect(one.read).toEqual([[PLUGIN]]);
    expect(one.keeper.holds(PLUGIN)).toBe(false);

    expect(await one.keeper.takeHere(PLUGIN)).toBe(true);
    expect(one.keeper.holds(PLUGIN)).toBe(true);
    const epoch = one.keeper.epochOf(PLUGIN);
    expect(epoch).toEqual(expect.any(Number));
    // Run elsewhere: the other replica's start leaves it there.
    expect(await two.keeper.takeHere(PLUGIN)).toBe(false);
    expect(two.keeper.holds(PLUGIN)).toBe(false);
    expect(two.keeper.epochOf(PLUGIN)).toBeUndefined();

    // The holder's status reaches the other with the lease; running, its waiting rows are claimed.
    one.keeper.statusChanged(PLUGIN, { state: 'running', crashCount: 0 });
    expect(one.claimed).toEqual([PLUGIN]);
    const deadline = Date.now() + 10_000;
    while ((await two.keeper.readLease(PLUGIN))?.status?.state !== 'running' && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(two.keeper.status(PLUGIN)).toEqual({ state: 'running', crashCount: 0, replica: 'one' });
    expect(two.keeper.isAvailable(PLUGIN)).toBe(true);

    // Given up (the host stops): nobody holds it, and the other's start takes it, under the next epoch.
    await one.keeper.stopRounds();
    await one.keeper.releaseAll();
    expect(one.keeper.holds(PLUGIN)).toBe(false);
    expect(await two.keeper.readLease(PLUGIN)).toMatchObject({ holder: '' });
    expect(await two.keeper.takeHere(PLUGIN)).toBe(true);
    expect(two.keeper.epochOf(PLUGIN)).toBe(epoch! + 1);
  }, 30_000);

  it('leaves a plugin whose start failed failed, waiting for the operator, once its start is over and it is not enabled', async () => {
    const FAILING = 'com.example.cannot-start';
    // Not enabled, and a plugin that exits before its handshake: the operator's start fails, as an install whose
    // start failed leaves it.
    const paths = hostPaths(dir);
    mkdirSync(paths.packageDir(FAILING), { recursive: true });
    writeFileSync(join(paths.packageDir(FAILING), 'plugin.mjs'), 'process.exit(3);\n');
    const manifest = parseStdioManifest({
      pluginId: FAILING,
      name: FAILING,
      version: '1.0.0',
      author: 'Tests',
      protocolVersion: 2,
      sdkVersion: '2.0.0',
      transport: { type: 'stdio-jsonrpc', stdio: { command: process.execPath, args: ['plugin.mjs', '--host-stdio'] } },
      eventSubscriptions: [{ eventType: 'message.created' }],
      permissions: [],
    });
    if (!manifest.ok) throw new Error(JSON.stringify(manifest.issues));
    await stores.registry.put({ ...contractRecord(FAILING, '1.0.0', { enabled: false }), manifest: manifest.value });
    const { keeper: k, runtime } = keeper('three', 50);
    await k.open();
    expect(await k.takeHere(FAILING)).toBe(true);
    const failed = await runtime.start(FAILING).catch(() => runtime.status(FAILING));
    expect(failed?.state).toBe('failed');
    k.statusChanged(FAILING, failed!);
    // Rounds run every 50 ms; the operator's start counts for two of them, then the lease goes.
    const deadline = Date.now() + 20_000;
    while (k.holds(FAILING) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(k.holds(FAILING)).toBe(false);
    expect(runtime.status(FAILING)?.state).toBe('failed');
    expect((await k.readLease(FAILING))?.status?.state).toBe('failed');
    await k.stopRounds();
  }, 30_000);
});
