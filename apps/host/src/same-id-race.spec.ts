import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { hostPaths, KeyedLock, type PluginLock } from '@host/host-core';
import { composeHost, type Host } from './compose';
import { startBareHttpPlugin, stdioFixturePackage } from './fixture-plugins.spec-helper';

// One plugin id, two transports: an upload of a stdio package and the
// registration of an HTTP service that report the same pluginId. Whichever
// comes first wins and the other is refused; never an HTTP endpoint live
// under a stdio record.
const TOKEN = 'same-id-race-token-0123456789abcdef0123';
const auth = { Authorization: `Bearer ${TOKEN}` };
const ID = 'com.example.bare-echo';

describe('an upload and an HTTP registration of one pluginId', () => {
  let dataDir: string;
  let host: Host;
  let child: ChildProcess | undefined;
  // Lets a paused install finish, so a failed test never leaves the host waiting on it while it closes.
  let finishSwap: () => void = () => undefined;

  afterEach(async () => {
    child?.kill('SIGKILL');
    finishSwap();
    await host?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('lets the upload that started first win while the registration waits, then refuses the registration', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'same-id-race-'));
    // The host's lock, telling the test when someone asks for the plugin id.
    const lock = new KeyedLock();
    const askers: (() => void)[] = [];
    const locks: PluginLock = {
      run(id, work) {
        for (const a of askers.splice(0)) a();
        return lock.run(id, work);
      },
    };
    let inSwap!: () => void;
    const installerInSwap = new Promise<void>((r) => (inSwap = r));
    const swapMayFinish = new Promise<void>((r) => (finishSwap = r));
    host = await composeHost({
      paths: hostPaths(dataDir),
      adminToken: TOKEN,
      version: '0.0.0-test',
      log: () => undefined,
      httpHealthCheckMilliseconds: 0,
      locks,
      onInstallStep: async (step) => {
        if (step !== 'extracted') return;
        inSwap();
        await swapMayFinish;
      },
    });
    const secretFile = join(dataDir, 'http-secret');
    writeFileSync(secretFile, '');
    const plugin = await startBareHttpPlugin(secretFile);
    child = plugin.child;

    const uploading = request(host.app)
      .post('/api/plugins/packages')
      .set(auth)
      .attach('package', stdioFixturePackage(ID), 'plugin.zip')
      .then((r) => r);
    await installerInSwap;
    const registrationAsksForLock = new Promise<void>((r) => askers.push(r));
    const registering = request(host.app)
      .post('/api/plugins/http')
      .set(auth)
      .send({ baseUrl: plugin.url })
      .then((r) => r);
    // Either the registration finishes now (nothing orders it after the upload) or it waits for the id.
    await Promise.race([registering, registrationAsksForLock]);
    finishSwap();
    const [uploaded, registered] = await Promise.all([uploading, registering]);

    expect(uploaded.status).toBe(201);
    expect(registered.status).toBe(409);
    expect(registered.body.error).toMatchObject({
      code: 'REGISTRATION_ID_TAKEN',
      message: expect.stringMatching(/installed stdio plugin/),
    });
    expect(await host.store.get(ID)).toMatchObject({ transport: 'stdio-jsonrpc' });
    expect(host.httpPlugins.endpoint(ID)).toBeUndefined();
    expect(host.httpPlugins.liveEndpoints()).toEqual([]);
    const listed = await request(host.app).get('/api/plugins').set(auth);
    expect(listed.body.plugins.map((p: { pluginId: string; transport: string }) => `${p.pluginId}:${p.transport}`)).toEqual([
      `${ID}:stdio-jsonrpc`,
    ]);
  });
});
