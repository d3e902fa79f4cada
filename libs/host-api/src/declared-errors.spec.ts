import { ADMIN_ROUTE_LIST, declaredErrorCodes, ErrorBodySchema, matchRoute, routeKey } from '@host/admin-api';
import { HostError, hostPaths, type PluginRuntime } from '@host/host-core';
import { PluginInstaller } from '@host/host-installer';
import { createUnavailableRuntime, testManifest, testPackage } from '@host/host-installer/testing';
import { FilePendingUpdateStore, FileSettingsStore, JsonRegistryStore } from '@host/host-store';
import { HOST_ERROR_CATALOG } from '@host/host-errors';
import type { Express } from 'express';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createApp } from './app';
import { ensureAdminToken } from './auth';

// Each failure a route answers must be one of the error codes its contract
// declares (and so one the OpenAPI document lists for it). These requests
// walk the known failure paths; the route is found from the request path.

const ID = 'com.example.echo';
const otherPlatform = process.platform === 'linux' ? 'windows' : 'linux';

/** A runtime whose start and restart fail the way a broken plugin does. */
function failingRuntime(): PluginRuntime {
  const fail = async (): Promise<never> => {
    throw new HostError('PLUGIN_START_FAILED', `${ID} exited with code 1 before the handshake finished.`);
  };
  return { ...createUnavailableRuntime(), start: fail, restart: fail };
}

describe('declared error codes', () => {
  let dataDir: string;
  let app: Express;
  let token: string;
  let close: () => Promise<void>;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'api-errors-'));
    const paths = hostPaths(dataDir);
    const store = await JsonRegistryStore.open(paths.stateDir);
    const runtime = failingRuntime();
    const installer = new PluginInstaller({
      paths,
      store,
      pendingUpdates: new FilePendingUpdateStore(join(paths.stateDir, 'pending')),
      runtime,
    });
    await installer.init();
    const admin = await ensureAdminToken(store);
    token = admin.generated!;
    app = createApp({ paths, store, settings: new FileSettingsStore(paths), installer, runtime, adminTokenHash: admin.hash });
    close = () => store.close();
  });
  afterEach(async () => {
    await close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const authed = (method: 'get' | 'post' | 'put' | 'delete', path: string) =>
    request(app)[method](path).set('Authorization', `Bearer ${token}`);
  const upload = (zip: Buffer) => authed('post', '/api/plugins/packages').attach('package', zip, 'plugin.zip');

  /** The answer is an error its route declares, with the catalogue's status. */
  function expectDeclared(res: request.Response, expectedCode: string): void {
    const { method, url } = res.request as unknown as { method: string; url: string };
    const path = new URL(url).pathname.replace(/^\/api/, '');
    const contract = matchRoute(ADMIN_ROUTE_LIST, method, path);
    if (!contract) throw new Error(`no contract for ${method} ${path}`);
    expect(ErrorBodySchema.safeParse(res.body).success).toBe(true);
    expect(res.body.error.code).toBe(expectedCode);
    expect({
      route: routeKey(contract),
      code: res.body.error.code,
      declared: declaredErrorCodes(contract).includes(res.body.error.code),
    }).toEqual({
      route: routeKey(contract),
      code: expectedCode,
      declared: true,
    });
    expect(res.status).toBe((HOST_ERROR_CATALOG[expectedCode as keyof typeof HOST_ERROR_CATALOG] as { status?: number }).status ?? 400);
  }

  it('unknown plugins: PLUGIN_NOT_FOUND', async () => {
    for (const [method, path] of [
      ['get', '/api/plugins/com.example.none'],
      ['post', '/api/plugins/com.example.none/start'],
      ['post', '/api/plugins/com.example.none/stop'],
      ['delete', '/api/plugins/com.example.none'],
      ['delete', '/api/plugins/com.example.none/data'],
      ['get', '/api/plugins/com.example.none/logs'],
      ['get', '/api/plugins/com.example.none/settings'],
      ['put', '/api/plugins/not a plugin id/settings'],
    ] as const) {
      const r = authed(method, path);
      expectDeclared(await (method === 'put' ? r.send({ values: {} }) : r), 'PLUGIN_NOT_FOUND');
    }
  });

  it('invalid bodies and queries: BAD_REQUEST', async () => {
    await upload(testPackage({ manifest: testManifest() })).expect(201);
    expectDeclared(await authed('put', `/api/plugins/${ID}/settings`).send({ values: {}, extra: 1 }), 'BAD_REQUEST');
    expectDeclared(await authed('get', `/api/plugins/${ID}/logs?tail=0`), 'BAD_REQUEST');
    expectDeclared(await authed('post', '/api/plugins/packages/pending/x/confirm').send({ startAfterInstall: 'yes' }), 'BAD_REQUEST');
    expectDeclared(
      await authed('post', '/api/plugins/packages')
        .field('startAfterInstall', 'maybe')
        .attach('package', testPackage({ manifest: testManifest() }), 'p.zip'),
      'BAD_REQUEST',
    );
  });

  it('a plugin whose process fails to start: the runtime start failure', async () => {
    await upload(testPackage({ manifest: testManifest() })).expect(201);
    expectDeclared(await authed('post', `/api/plugins/${ID}/start`), 'PLUGIN_START_FAILED');
    expectDeclared(await authed('post', `/api/plugins/${ID}/restart`), 'PLUGIN_START_FAILED');
  });

  it('a package for another platform: INSTALL_PLATFORM_UNSUPPORTED', async () => {
    const zip = testPackage({ manifest: testManifest({ supportedPlatforms: [{ platform: otherPlatform }] }) });
    expectDeclared(await upload(zip), 'INSTALL_PLATFORM_UNSUPPORTED');
  });

  it('uploads and pending updates: their own codes', async () => {
    expectDeclared(await authed('post', '/api/plugins/packages'), 'INSTALL_NO_FILE');
    expectDeclared(await upload(Buffer.from('not a zip')), 'INSTALL_NOT_A_ZIP');
    await upload(testPackage({ manifest: testManifest() })).expect(201);
    expectDeclared(await upload(testPackage({ manifest: testManifest({ version: '1.1.0' }) })), 'UPDATE_CONFIRMATION_REQUIRED');
    expectDeclared(await authed('get', '/api/plugins/packages/pending/00000000-0000-0000-0000-000000000000'), 'PENDING_UPDATE_NOT_FOUND');
    expectDeclared(
      await authed('delete', '/api/plugins/packages/pending/00000000-0000-0000-0000-000000000000'),
      'PENDING_UPDATE_NOT_FOUND',
    );
  });

  it('without the admin token: UNAUTHORIZED on every route that needs it', async () => {
    for (const contract of ADMIN_ROUTE_LIST.filter((c) => c.auth !== false)) {
      const path = `/api${contract.path.replace(/\{[^}]+\}/g, 'x')}`;
      const res = await request(app)[contract.method](path);
      expect({ route: routeKey(contract), status: res.status, code: res.body.error?.code }).toEqual({
        route: routeKey(contract),
        status: 401,
        code: 'UNAUTHORIZED',
      });
    }
  });
});
