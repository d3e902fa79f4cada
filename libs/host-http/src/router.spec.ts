import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import request from 'supertest';
import {
  ADMIN_ROUTES,
  declaredErrorCodes,
  ErrorBodySchema,
  RefreshHttpPluginResponseSchema,
  RegisterHttpPluginResponseSchema,
  routeKey,
  type RouteContract,
} from '@host/admin-api';
import { errorHandler } from '@host/host-routes';
import type { StdioPluginRecord } from '@host/host-core';
import { JsonRegistryStore } from '@host/host-store';
import { HOST_ERROR_CATALOG, REGISTRATION_ERRORS } from '@host/host-errors';
import { HttpPluginRegistry } from './registry';
import { createHttpRegistrationRouter, httpRegistrationRoutes } from './router';
import { manifest, sendJson, startServer, type TestServer } from './test-servers';

// The registration routes implement their contracts from @host/admin-api:
// same paths, schemas and error lists, and every failure they answer is one
// of the codes the contract declares.

let dir: string;
let store: JsonRegistryStore;
let registry: HttpPluginRegistry;
let plugin: TestServer;
let status: number;

function app() {
  const a = express();
  a.use('/api', createHttpRegistrationRouter({ registry }));
  a.use(errorHandler({}));
  return a;
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'host-http-router-'));
  store = await JsonRegistryStore.open(join(dir, 'state'));
  registry = new HttpPluginRegistry({ store });
  status = 200;
  plugin = await startServer((req, res) =>
    req.path === '/host/plugin/manifest' ? sendJson(res, status, manifest()) : sendJson(res, 404, {}),
  );
});

afterEach(async () => {
  await registry.close();
  await plugin.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const CONTRACTS = [ADMIN_ROUTES.registerHttpPlugin, ADMIN_ROUTES.refreshHttpPlugin, ADMIN_ROUTES.confirmHttpRefresh];

/** A failure with the code expected, which the route's contract declares. */
function expectDeclared(res: request.Response, contract: RouteContract, code: string): void {
  expect(ErrorBodySchema.safeParse(res.body).success).toBe(true);
  expect({ code: res.body.error.code, declared: declaredErrorCodes(contract).includes(res.body.error.code) }).toEqual({
    code,
    declared: true,
  });
  expect(res.status).toBe((HOST_ERROR_CATALOG[code as keyof typeof HOST_ERROR_CATALOG] as { status?: number }).status ?? 400);
}

describe('HTTP registration routes', () => {
  it('implement the registration contracts of the admin API, nothing more', () => {
    const routes = httpRegistrationRoutes({ registry });
    expect(routes.map(routeKey)).toEqual(CONTRACTS.map(routeKey));
    routes.forEach((r, i) => {
      expect({ errors: r.errors, responses: r.responses, body: r.body }).toEqual({
        errors: CONTRACTS[i]!.errors,
        responses: CONTRACTS[i]!.responses,
        body: CONTRACTS[i]!.body,
      });
    });
  });

  it('declare every registration code of the catalogue that a manifest fetch can end with', () => {
    const registration = Object.keys(REGISTRATION_ERRORS);
    expect(ADMIN_ROUTES.registerHttpPlugin.errors).toEqual(expect.arrayContaining(registration));
    const refreshable = registration.filter(
      (c) => !['REGISTRATION_URL_INVALID', 'REGISTRATION_URL_CREDENTIALS', 'REGISTRATION_ID_TAKEN'].includes(c),
    );
    expect(ADMIN_ROUTES.refreshHttpPlugin.errors).toEqual(expect.arrayContaining(refreshable));
  });

  it('answer with the documented response schemas', async () => {
    const registered = await request(app()).post('/api/plugins/http').send({ baseUrl: plugin.url }).expect(201);
    expect(RegisterHttpPluginResponseSchema.safeParse(registered.body).error).toBeUndefined();
    const refreshed = await request(app()).post(`/api/plugins/${registered.body.plugin.pluginId}/refresh`).expect(200);
    expect(RefreshHttpPluginResponseSchema.safeParse(refreshed.body).error).toBeUndefined();
  });

  it('name a command another plugin answers too in the registration answer', async () => {
    const roll = { name: 'roll', aliases: [], prefixes: ['/'], priority: 0 };
    await store.put({
      transport: 'stdio-jsonrpc',
      pluginId: 'com.example.dice',
      enabled: false,
      manifest: { commands: [roll] },
    } as unknown as StdioPluginRecord);
    status = 200;
    const served = manifest({ commands: [roll] });
    const other = await startServer((req, res) =>
      req.path === '/host/plugin/manifest' ? sendJson(res, 200, served) : sendJson(res, 404, {}),
    );
    try {
      const res = await request(app()).post('/api/plugins/http').send({ baseUrl: other.url }).expect(201);
      expect(RegisterHttpPluginResponseSchema.parse(res.body).commandConflicts).toEqual([
        expect.objectContaining({ command: 'roll', prefix: '/', otherPluginId: 'com.example.dice', winner: 'com.example.dice' }),
      ]);
    } finally {
      await other.close();
    }
  });

  describe('POST /plugins/http failures', () => {
    const register = (body: unknown) =>
      request(app())
        .post('/api/plugins/http')
        .send(body as object);

    it('an invalid body: BAD_REQUEST', async () => {
      expectDeclared(await register({ url: plugin.url }), ADMIN_ROUTES.registerHttpPlugin, 'BAD_REQUEST');
      expectDeclared(
        await register({ baseUrl: plugin.url, requestTimeoutMilliseconds: 5 }),
        ADMIN_ROUTES.registerHttpPlugin,
        'BAD_REQUEST',
      );
    });

    it('a body that is not JSON: BAD_REQUEST', async () => {
      const res = await request(app()).post('/api/plugins/http').set('content-type', 'application/json').send('{"baseUrl": ');
      expectDeclared(res, ADMIN_ROUTES.registerHttpPlugin, 'BAD_REQUEST');
    });

    it('a base URL that is not one: REGISTRATION_URL_INVALID', async () => {
      expectDeclared(await register({ baseUrl: 'not a url' }), ADMIN_ROUTES.registerHttpPlugin, 'REGISTRATION_URL_INVALID');
    });

    it('a manifest answered with another status: REGISTRATION_HTTP_STATUS', async () => {
      status = 500;
      expectDeclared(await register({ baseUrl: plugin.url }), ADMIN_ROUTES.registerHttpPlugin, 'REGISTRATION_HTTP_STATUS');
    });

    it('an id already taken: REGISTRATION_ID_TAKEN', async () => {
      await register({ baseUrl: plugin.url }).expect(201);
      expectDeclared(await register({ baseUrl: plugin.url }), ADMIN_ROUTES.registerHttpPlugin, 'REGISTRATION_ID_TAKEN');
    });
  });

  describe('POST /plugins/{pluginId}/refresh failures', () => {
    const refresh = (pluginId: string) => request(app()).post(`/api/plugins/${pluginId}/refresh`);

    it('an unknown plugin or id: PLUGIN_NOT_FOUND', async () => {
      expectDeclared(await refresh('com.example.none'), ADMIN_ROUTES.refreshHttpPlugin, 'PLUGIN_NOT_FOUND');
      expectDeclared(await refresh('Not%20An%20Id'), ADMIN_ROUTES.refreshHttpPlugin, 'PLUGIN_NOT_FOUND');
    });

    it('a stdio plugin: PLUGIN_STATE_CONFLICT', async () => {
      await store.put({ transport: 'stdio-jsonrpc', pluginId: 'com.example.local', enabled: false } as unknown as StdioPluginRecord);
      expectDeclared(await refresh('com.example.local'), ADMIN_ROUTES.refreshHttpPlugin, 'PLUGIN_STATE_CONFLICT');
    });

    it('a manifest answered with another status: REGISTRATION_HTTP_STATUS', async () => {
      await registry.register({ baseUrl: plugin.url });
      status = 503;
      expectDeclared(await refresh('com.example.echo'), ADMIN_ROUTES.refreshHttpPlugin, 'REGISTRATION_HTTP_STATUS');
    });

    it('an unreachable plugin: REGISTRATION_UNREACHABLE', async () => {
      await registry.register({ baseUrl: plugin.url });
      await plugin.close();
      expectDeclared(await refresh('com.example.echo'), ADMIN_ROUTES.refreshHttpPlugin, 'REGISTRATION_UNREACHABLE');
    });
  });
});
