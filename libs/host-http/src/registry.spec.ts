import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express, { type ErrorRequestHandler } from 'express';
import request from 'supertest';
import { HostError, type PluginEndpoint, type RegistryStore, type StdioPluginRecord } from '@host/host-core';
import { JsonRegistryStore } from '@host/host-store';
import { parseStdioManifest, type StdioManifest } from '@host/protocol';
import { HttpPluginRegistry } from './registry';
import { createHttpRegistrationRouter } from './router';
import { manifest, sendJson, startServer, type TestServer } from './test-servers';

function parseStdioManifestOrThrow(input: unknown): StdioManifest {
  const r = parseStdioManifest(input);
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.value;
}

let dir: string;
let store: JsonRegistryStore;
let endpoints: Map<string, PluginEndpoint>;
let registry: HttpPluginRegistry;
let plugin: TestServer;
let served: Record<string, unknown>;

function app() {
  const a = express();
  a.use(express.json());
  a.use('/api', createHttpRegistrationRouter({ registry }));
  const onError: ErrorRequestHandler = (err, _req, res, _next) => {
    const e = err instanceof HostError ? err : new HostError('INTERNAL', String(err));
    res.status(e.status).json({ error: e.toJSON() });
  };
  a.use(onError);
  return a;
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'host-http-registry-'));
  store = await JsonRegistryStore.open(join(dir, 'state'));
  endpoints = new Map();
  registry = new HttpPluginRegistry({ store, endpoints });
  served = manifest();
  plugin = await startServer((req, res) => (req.path === '/host/plugin/manifest' ? sendJson(res, 200, served) : sendJson(res, 404, {})));
});

afterEach(async () => {
  await registry.close();
  await plugin.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('POST /api/plugins/http', () => {
  it('registers the plugin, answers 201 with the secret once, and makes it deliverable', async () => {
    const res = await request(app())
      .post('/api/plugins/http')
      .send({ baseUrl: `${plugin.url}/` })
      .expect(201);
    expect(res.body.signingSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(res.body.notice).toMatch(/shown only once/);
    expect(res.body.plugin).toMatchObject({
      pluginId: 'com.example.echo',
      transport: 'http',
      baseUrl: plugin.url,
      version: '1.0.0',
      capabilityNames: ['ReceiveMessages', 'HttpTransport'],
      enabled: true,
      state: 'running',
      health: { status: 'healthy', circuit: 'closed' },
    });
    expect(JSON.stringify(res.body.plugin)).not.toContain(res.body.signingSecret);
    // Stored for signing, never shown again.
    const stored = await store.get('com.example.echo');
    expect(stored).toMatchObject({ transport: 'http', signingSecret: res.body.signingSecret });
    expect(JSON.stringify(await registry.list())).not.toContain(res.body.signingSecret);
    expect(endpoints.get('com.example.echo')).toMatchObject({ pluginId: 'com.example.echo', transport: 'http' });
  });

  it('answers 409 REGISTRATION_ID_TAKEN when an HTTP plugin has the id', async () => {
    await request(app()).post('/api/plugins/http').send({ baseUrl: plugin.url }).expect(201);
    const res = await request(app()).post('/api/plugins/http').send({ baseUrl: plugin.url }).expect(409);
    expect(res.body.error).toMatchObject({ code: 'REGISTRATION_ID_TAKEN', details: { pluginId: 'com.example.echo', transport: 'http' } });
  });

  it('answers 409 REGISTRATION_ID_TAKEN when a stdio plugin has the id', async () => {
    const stdio: StdioPluginRecord = {
      transport: 'stdio-jsonrpc',
      pluginId: 'com.example.echo',
      manifest: parseStdioManifestOrThrow({
        pluginId: 'com.example.echo',
        name: 'Echo',
        version: '1.0.0',
        author: 'Example',
        protocolVersion: 2,
        sdkVersion: '2.0.0',
        transport: { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['index.js', '--host-stdio'], workingDirectory: '.' } },
        eventSubscriptions: [{ eventType: 'message.created' }],
        permissions: ['messages.reply'],
      }),
      packageSha256: '0'.repeat(64),
      installedAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      enabled: true,
    };
    await store.put(stdio);
    const res = await request(app()).post('/api/plugins/http').send({ baseUrl: plugin.url }).expect(409);
    expect(res.body.error).toMatchObject({ code: 'REGISTRATION_ID_TAKEN', message: expect.stringMatching(/stdio plugin/) });
    expect((await store.get('com.example.echo'))?.transport).toBe('stdio-jsonrpc');
  });

  it('lets only one of two simultaneous registrations of one id win', async () => {
    const results = await Promise.allSettled([registry.register({ baseUrl: plugin.url }), registry.register({ baseUrl: plugin.url })]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ code: 'REGISTRATION_ID_TAKEN' });
  });

  it('answers 400 BAD_REQUEST for a body that is not a registration', async () => {
    const res = await request(app()).post('/api/plugins/http').send({ url: plugin.url }).expect(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(res.body.error.details.issues.map((i: { path: string }) => i.path).sort()).toEqual(['baseUrl', 'url']);
    expect(res.body.error.details.issues.map((i: { code: string }) => i.code).sort()).toEqual([
      'request.field.required',
      'request.field.unknown',
    ]);
    expect(res.body.error.message).toMatch(/^The request body is not valid: /);
  });

  it('answers 4xx with the registration code when the manifest is refused, and stores nothing', async () => {
    served = manifest({ capabilities: 1 });
    const res = await request(app()).post('/api/plugins/http').send({ baseUrl: plugin.url }).expect(422);
    expect(res.body.error.code).toBe('REGISTRATION_CAPABILITY_MISSING');
    expect(await store.list()).toEqual([]);
    expect(endpoints.size).toBe(0);
  });

  it('stores the per-plugin timeout and can register disabled', async () => {
    const res = await request(app())
      .post('/api/plugins/http')
      .send({ baseUrl: plugin.url, requestTimeoutMilliseconds: 2500, enabled: false })
      .expect(201);
    expect(res.body.plugin).toMatchObject({ enabled: false, state: 'stopped', requestTimeoutMilliseconds: 2500, health: null });
    expect(endpoints.size).toBe(0);
  });
});

describe('POST /api/plugins/:pluginId/refresh', () => {
  it('keeps the stored manifest when the fetched one adds capabilities, until the operator confirms that diff', async () => {
    await request(app()).post('/api/plugins/http').send({ baseUrl: plugin.url }).expect(201);
    served = manifest({ capabilities: 13 });
    const res = await request(app()).post('/api/plugins/com.example.echo/refresh').expect(200);
    expect(res.body).toMatchObject({
      changed: false,
      confirmationRequired: true,
      changes: { versionOrder: 'same', capabilitiesAdded: ['InterceptMessages'] },
      plugin: { capabilities: 9 },
    });
    expect((await store.get('com.example.echo'))?.manifest).toMatchObject({ capabilities: 9 });
    served = manifest({ capabilities: 15 });
    await request(app()).post('/api/plugins/com.example.echo/refresh/confirm').send({ sha256: res.body.incoming.sha256 }).expect(409);
    expect((await store.get('com.example.echo'))?.manifest).toMatchObject({ capabilities: 9 });
    served = manifest({ capabilities: 13 });
    const ok = await request(app())
      .post('/api/plugins/com.example.echo/refresh/confirm')
      .send({ sha256: res.body.incoming.sha256 })
      .expect(200);
    expect(ok.body).toMatchObject({ changed: true, plugin: { capabilities: 13 } });
  });

  it('re-fetches the manifest and shows the new version', async () => {
    const first = await request(app()).post('/api/plugins/http').send({ baseUrl: plugin.url }).expect(201);
    served = manifest({ version: '1.1.0', description: 'Now with a description' });
    const res = await request(app()).post('/api/plugins/com.example.echo/refresh').expect(200);
    expect(res.body).toMatchObject({
      previousVersion: '1.0.0',
      changed: true,
      confirmationRequired: false,
      changes: { versionOrder: 'upgrade', permissionsAdded: [], capabilitiesAdded: [] },
      plugin: { version: '1.1.0', description: 'Now with a description' },
    });
    expect((await store.get('com.example.echo'))?.manifest.version).toBe('1.1.0');
    expect((endpoints.get('com.example.echo') as unknown as { current: { manifest: { version: string } } }).current.manifest.version).toBe(
      '1.1.0',
    );
    // The refresh is signed with the stored secret and names the plugin.
    const last = plugin.requests.at(-1)!;
    expect(last.headers['x-host-plugin-id']).toBe('com.example.echo');
    expect(last.headers['x-host-signature']).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(first.body.signingSecret).toBe(((await store.get('com.example.echo')) as { signingSecret: string }).signingSecret);
  });

  it('reports no change when the manifest is the same', async () => {
    await registry.register({ baseUrl: plugin.url });
    await expect(registry.refresh('com.example.echo')).resolves.toMatchObject({ changed: false, previousVersion: '1.0.0' });
  });

  it('refuses a service that now reports another pluginId', async () => {
    await registry.register({ baseUrl: plugin.url });
    served = manifest({ pluginId: 'com.example.other' });
    const res = await request(app()).post('/api/plugins/com.example.echo/refresh').expect(422);
    expect(res.body.error).toMatchObject({ code: 'REGISTRATION_MANIFEST_INVALID', message: expect.stringMatching(/must stay the same/) });
  });

  it('answers 404 for an unknown plugin and 409 for a stdio plugin', async () => {
    await request(app()).post('/api/plugins/com.example.none/refresh').expect(404);
    await store.put({ transport: 'stdio-jsonrpc', pluginId: 'com.example.local', enabled: false } as unknown as StdioPluginRecord);
    const res = await request(app()).post('/api/plugins/com.example.local/refresh').expect(409);
    expect(res.body.error.message).toMatch(/uploading a new package/);
  });

  it('reports an unreachable plugin with its code', async () => {
    await registry.register({ baseUrl: plugin.url });
    await plugin.close();
    const res = await request(app()).post('/api/plugins/com.example.echo/refresh').expect(422);
    expect(res.body.error.code).toBe('REGISTRATION_UNREACHABLE');
  });
});

describe('enable, disable, remove, load', () => {
  it('disable removes the endpoint, enable brings it back, both persist', async () => {
    await registry.register({ baseUrl: plugin.url });
    expect(await registry.disable('com.example.echo')).toMatchObject({ enabled: false, state: 'stopped', health: null });
    expect(endpoints.has('com.example.echo')).toBe(false);
    expect((await store.get('com.example.echo'))?.enabled).toBe(false);
    expect(registry.status((await store.get('com.example.echo')) as never)).toMatchObject({ state: 'stopped' });
    expect(await registry.enable('com.example.echo')).toMatchObject({ enabled: true, state: 'running', health: { status: 'healthy' } });
    expect(endpoints.has('com.example.echo')).toBe(true);
    expect(registry.status((await store.get('com.example.echo')) as never)).toMatchObject({
      state: 'running',
      health: 'healthy',
      crashCount: 0,
    });
  });

  it('remove unregisters the plugin and frees its id', async () => {
    await registry.register({ baseUrl: plugin.url });
    await registry.remove('com.example.echo');
    expect(await store.get('com.example.echo')).toBeUndefined();
    expect(endpoints.size).toBe(0);
    await expect(registry.remove('com.example.echo')).rejects.toMatchObject({ code: 'PLUGIN_NOT_FOUND' });
    await expect(registry.register({ baseUrl: plugin.url })).resolves.toMatchObject({ plugin: { pluginId: 'com.example.echo' } });
  });

  // The store is shared with the installer and the admin API: a change another writer makes
  // while disable or enable runs is kept, and a record removed meanwhile is not brought back.
  it('enable and disable change only enabled on the record as stored when they write', async () => {
    await registry.register({ baseUrl: plugin.url });
    // Another component's write, landing at the registry's next store call (after a read, before a write).
    let interleave: (() => Promise<unknown>) | undefined;
    const landNow = async () => {
      const write = interleave;
      interleave = undefined;
      await write?.();
    };
    const shared: RegistryStore = {
      list: () => store.list(),
      get: async (id) => {
        const r = await store.get(id);
        await landNow();
        return r;
      },
      putIfAbsent: async (r) => (await landNow(), store.putIfAbsent(r)),
      update: async (id, change) => (await landNow(), store.update(id, change)),
      put: async (r) => (await landNow(), store.put(r)),
      delete: async (id) => (await landNow(), store.delete(id)),
      getMeta: (k) => store.getMeta(k),
      setMeta: (k, v) => store.setMeta(k, v),
      setMetaIfAbsent: (k, v) => store.setMetaIfAbsent(k, v),
      close: async () => undefined,
    };
    await registry.close();
    registry = new HttpPluginRegistry({ store: shared, endpoints });
    await registry.load();
    interleave = () => store.update('com.example.echo', (r) => ({ ...r, requestTimeoutMilliseconds: 5000 }));
    await registry.disable('com.example.echo');
    expect(await store.get('com.example.echo')).toMatchObject({ enabled: false, requestTimeoutMilliseconds: 5000 });
    interleave = () => store.delete('com.example.echo');
    await expect(registry.enable('com.example.echo')).rejects.toMatchObject({ code: 'PLUGIN_NOT_FOUND' });
    expect(await store.get('com.example.echo')).toBeUndefined();
    expect(endpoints.size).toBe(0);
  });

  it('periodic health checks notice a plugin that went away, without any event', async () => {
    await registry.close();
    registry = new HttpPluginRegistry({ store, endpoints, circuit: { failureThreshold: 2 } });
    await registry.register({ baseUrl: plugin.url });
    await plugin.close();
    registry.startHealthChecks(25);
    const deadline = Date.now() + 5000;
    while (registry.health('com.example.echo')?.status !== 'unreachable' && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(registry.health('com.example.echo')).toMatchObject({ status: 'unreachable', lastError: { code: 'http.unreachable' } });
    registry.stopHealthChecks();
  });

  it('load() creates endpoints for the enabled HTTP plugins of the store', async () => {
    await registry.register({ baseUrl: plugin.url });
    served = manifest({ pluginId: 'com.example.off' });
    await registry.register({ baseUrl: plugin.url, enabled: false });
    const fresh = new Map<string, PluginEndpoint>();
    const restarted = new HttpPluginRegistry({ store, endpoints: fresh });
    await restarted.load();
    expect([...fresh.keys()]).toEqual(['com.example.echo']);
    expect(restarted.liveEndpoints().map((e) => e.pluginId)).toEqual(['com.example.echo']);
    await restarted.close();
  });
});
