import { StatsResponseSchema } from '@host/admin-api';
import { hostPaths } from '@host/host-core';
import { PluginInstaller } from '@host/host-installer';
import { createUnavailableRuntime, testManifest, testPackage } from '@host/host-installer/testing';
import { StatsRing } from '@host/host-metrics';
import { FilePendingUpdateStore, FileSettingsStore, JsonRegistryStore } from '@host/host-store';
import type { Express } from 'express';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp } from './app';
import { ensureAdminToken } from './auth';
import { statsRoutes } from './routes/stats-routes';

const ID = 'com.example.echo';
const pkg = (version: string) => testPackage({ manifest: testManifest({ version }), indexJs: `// v${version}\n` });

describe('GET /api/stats', () => {
  let dataDir: string;
  let app: Express;
  let token: string;
  let close: () => Promise<void>;
  let ring: StatsRing;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'stats-'));
    ring = new StatsRing();
    const paths = hostPaths(dataDir);
    const store = await JsonRegistryStore.open(paths.stateDir);
    close = () => store.close();
    const runtime = createUnavailableRuntime();
    const installer = new PluginInstaller({
      paths,
      store,
      pendingUpdates: new FilePendingUpdateStore(join(paths.stateDir, 'pending')),
      runtime,
    });
    await installer.init();
    const { hash, generated } = await ensureAdminToken(store);
    token = generated!;
    const queues = () => new Map([[ID, { active: 1, waiting: 4, oldestWaitMilliseconds: 1200, expired: 2, dropped: 0 }]]);
    app = createApp({
      paths,
      store,
      settings: new FileSettingsStore(paths),
      installer,
      runtime,
      adminTokenHash: hash,
      queues,
      apiRoutes: statsRoutes({ paths, store, installer, runtime, queues, stats: ring, pending: installer.pending }),
    });
  });
  afterEach(async () => {
    await close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const authed = (method: 'get' | 'post', path: string) => request(app)[method](path).set('Authorization', `Bearer ${token}`);

  it('refuses a request without the admin token', async () => {
    const res = await request(app).get('/api/stats');
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status: 401, code: 'UNAUTHORIZED' });
  });

  it("answers the hour's buckets, each plugin's health with its backlog and last error, and the alerts", async () => {
    await authed('post', '/api/plugins/packages').attach('package', pkg('1.0.0'), 'plugin.zip').expect(201);
    const update = await authed('post', '/api/plugins/packages').attach('package', pkg('1.1.0'), 'plugin.zip');
    expect(update.body.error.code).toBe('UPDATE_CONFIRMATION_REQUIRED');
    const pendingId = update.body.error.details.pendingUpdate.id as string;

    ring.eventReceived();
    ring.eventReceived();
    ring.deliveryFinal(ID, 'completed', null);
    ring.deliveryFinal(ID, 'failed', { code: 'delivery.failed', message: 'the handler threw' });
    ring.deliveryFinal(ID, 'expired', { code: 'delivery.expired', message: 'waited in the queue too long' });
    ring.eventCompleted(40);

    const res = await authed('get', '/api/stats').expect(200);
    const body = StatsResponseSchema.parse(res.body);
    expect(body.bucketSeconds).toBe(10);
    expect(body.buckets).toHaveLength(360);
    expect(body.buckets.at(-1)).toMatchObject({
      eventsIn: 2,
      completed: 1,
      failed: 1,
      expired: 1,
      p50Milliseconds: 40,
      p99Milliseconds: 40,
    });
    expect(body.plugins).toEqual([
      {
        pluginId: ID,
        name: expect.any(String),
        transport: 'stdio-jsonrpc',
        state: expect.any(String),
        deliveries: 3,
        failed: 1,
        expired: 1,
        errorRate: 2 / 3,
        queue: { active: 1, waiting: 4, oldestWaitMilliseconds: 1200, expired: 2, dropped: 0 },
        lastError: { code: 'delivery.expired', message: 'waited in the queue too long', at: expect.any(String) },
      },
    ]);
    expect(body.alerts).toEqual([
      { kind: 'eventsExpiring', pluginId: ID, detail: '1' },
      { kind: 'updatePending', pluginId: ID, pendingUpdateId: pendingId, detail: '1.1.0' },
    ]);
  });
});
