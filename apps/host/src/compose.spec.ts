import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { ADMIN_ROUTE_LIST, declaredErrorCodes } from '@host/admin-api';
import { hostPaths } from '@host/host-core';
import { composeHost, type Host } from './compose';
import { startBareHttpPlugin, stdioFixturePackage } from './fixture-plugins.spec-helper';

// The whole host wired as main wires it, driven through the admin API only:
// a stdio plugin installed from its ZIP and an HTTP plugin registered by URL
// answer the same console message; stopping one leaves the other answering.
const TOKEN = 'compose-test-token-0123456789abcdef0123';
const auth = { Authorization: `Bearer ${TOKEN}` };

describe('composed host', () => {
  let dataDir: string;
  let host: Host;
  const children: ChildProcess[] = [];

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'compose-'));
    host = await composeHost({
      paths: hostPaths(dataDir),
      adminToken: TOKEN,
      version: '0.0.0-test',
      log: () => undefined,
      httpHealthCheckMilliseconds: 0,
      runtimeTimings: { pingIntervalMilliseconds: 0 },
    });
  });

  afterEach(async () => {
    await host.close();
    for (const c of children) c.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  const say = (text: string) =>
    request(host.app)
      .post('/api/console/messages')
      .set(auth)
      .send({ conversation: { type: 'group', id: 'g1' }, sender: { id: 'u1', displayName: 'Ann' }, text });

  it('refuses console messages without the admin token', async () => {
    const r = await request(host.app)
      .post('/api/console/messages')
      .send({ conversation: { type: 'group', id: 'g' }, sender: { id: 'u' }, text: 'hi' });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('UNAUTHORIZED');
  });

  it('serves a stdio and an HTTP plugin side by side', async () => {
    const installed = await request(host.app)
      .post('/api/plugins/packages')
      .set(auth)
      .field('startAfterInstall', 'true')
      .attach('package', stdioFixturePackage('com.example.echo'), 'echo.zip');
    expect(installed.status).toBe(201);
    expect(installed.body.plugin).toMatchObject({ pluginId: 'com.example.echo', state: 'running' });

    await say('/log written through log.write');
    const logs = await request(host.app).get('/api/plugins/com.example.echo/logs?tail=20').set(auth);
    expect(logs.status).toBe(200);
    expect(JSON.stringify(logs.body)).toContain('written through log.write');

    const first = await say('/echo <b>hi</b>');
    expect(first.status).toBe(200);
    expect(first.body.outbound).toEqual([
      expect.objectContaining({
        pluginId: 'com.example.echo',
        body: expect.objectContaining({ msg_type: 2, markdown: { content: '<qqbot-at-user id="u1" /> <\u2060b>hi<\u2060/b>' } }),
      }),
    ]);

    const secretFile = join(dataDir, 'bare-secret');
    writeFileSync(secretFile, '');
    const bare = await startBareHttpPlugin(secretFile);
    children.push(bare.child);
    const registered = await request(host.app).post('/api/plugins/http').set(auth).send({ baseUrl: bare.url });
    expect(registered.status).toBe(201);
    writeFileSync(secretFile, registered.body.signingSecret);

    const both = await say('/echo both');
    expect(both.body.deliveries.map((d: { pluginId: string }) => d.pluginId).sort()).toEqual(['com.example.bare-echo', 'com.example.echo']);
    // The stdio plugin ACKs, then reports events.completed; the HTTP answer is decision and completion at once.
    expect(both.body.completed).toBe(true);
    expect(
      both.body.deliveries.map((d: { state: string; completion: { error: unknown } | null }) => [d.state, d.completion?.error]),
    ).toEqual([
      ['completed', null],
      ['completed', null],
    ]);
    expect(both.body.outbound.map((o: { pluginId: string }) => o.pluginId).sort()).toEqual(['com.example.bare-echo', 'com.example.echo']);

    // The HTTP plugin goes away: the stdio plugin keeps answering.
    bare.child.kill('SIGKILL');
    await new Promise((r) => bare.child.once('exit', r));
    const after = await say('/echo still here');
    const httpDelivery = after.body.deliveries.find((d: { pluginId: string }) => d.pluginId === 'com.example.bare-echo');
    expect(httpDelivery.error).not.toBeNull();
    expect(after.body.outbound.map((o: { pluginId: string }) => o.pluginId)).toEqual(['com.example.echo']);
    const httpDetail = await request(host.app).get('/api/plugins/com.example.bare-echo').set(auth);
    expect(httpDetail.body.plugin.runtime).toMatchObject({
      health: expect.stringMatching(/^(degraded|unreachable)$/),
      lastError: expect.any(String),
    });

    // Disabled, the HTTP plugin gets nothing; enabled again, it is asked again.
    expect((await request(host.app).post('/api/plugins/com.example.bare-echo/stop').set(auth)).body.plugin.state).toBe('stopped');
    expect((await say('/echo quiet')).body.deliveries.map((d: { pluginId: string }) => d.pluginId)).toEqual(['com.example.echo']);
    expect((await request(host.app).post('/api/plugins/com.example.bare-echo/start').set(auth)).status).toBe(200);
    expect((await say('/echo loud')).body.deliveries.map((d: { pluginId: string }) => d.pluginId).sort()).toEqual([
      'com.example.bare-echo',
      'com.example.echo',
    ]);

    const listed = await request(host.app).get('/api/plugins').set(auth);
    expect(listed.body.plugins.map((p: { pluginId: string; transport: string }) => `${p.pluginId}:${p.transport}`).sort()).toEqual([
      'com.example.bare-echo:http',
      'com.example.echo:stdio-jsonrpc',
    ]);

    const pid = host.runtime.status('com.example.echo')!.pid!;
    const stopped = await request(host.app).post('/api/plugins/com.example.echo/stop').set(auth);
    expect(stopped.body.plugin.state).toBe('stopped');
    expect(() => process.kill(pid, 0)).toThrow();
  });
});

describe('OpenAPI document of the composed host', () => {
  it('lists every route of the admin API contract, the console and HTTP registration routes included', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'compose-openapi-'));
    const host = await composeHost({
      paths: hostPaths(dataDir),
      adminToken: TOKEN,
      version: '0.0.0-test',
      log: () => undefined,
      httpHealthCheckMilliseconds: 0,
    });
    try {
      const doc = await request(host.app).get('/api/openapi.json').set(auth);
      expect(doc.status).toBe(200);
      const paths = doc.body.paths as Record<
        string,
        Record<string, { responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }> }>
      >;
      const ops = Object.entries(paths).flatMap(([p, m]) => Object.keys(m).map((k) => `${k.toUpperCase()} ${p}`));
      // Exactly the contract: nothing mounted without documentation, nothing documented without a handler.
      expect(ops.sort()).toEqual(ADMIN_ROUTE_LIST.map((c) => `${c.method.toUpperCase()} /api${c.path}`).sort());
      for (const c of ADMIN_ROUTE_LIST) {
        const op = paths[`/api${c.path}`]![c.method]!;
        // Each route's success answers, with their schemas...
        for (const [status, res] of Object.entries(c.responses)) {
          expect(op.responses[status]).toBeDefined();
          if (res.schema) expect(op.responses[status]!.content![res.contentType ?? 'application/json']!.schema).toBeDefined();
        }
        // ...and every error code it declares, under the code's status.
        const documented = Object.values(op.responses).flatMap(
          (r) => (r.content?.['application/json']?.schema['x-error-codes'] as string[] | undefined) ?? [],
        );
        expect(documented.sort()).toEqual(declaredErrorCodes(c).sort());
      }
      const register = paths['/api/plugins/http']!['post']!;
      expect(JSON.stringify(register)).toContain('baseUrl');
      expect(register.responses['201']!.content!['application/json']!.schema).toEqual(expect.objectContaining({ type: 'object' }));
      expect(register.responses['422']!.content!['application/json']!.schema['x-error-codes']).toContain('REGISTRATION_TLS_FAILED');
      expect(register.responses['400']!.content!['application/json']!.schema['x-error-codes']).toEqual(
        expect.arrayContaining(['BAD_REQUEST', 'REGISTRATION_URL_INVALID']),
      );
      const refresh = paths['/api/plugins/{pluginId}/refresh']!['post']!;
      expect(refresh.responses['409']!.content!['application/json']!.schema['x-error-codes']).toEqual(['PLUGIN_STATE_CONFLICT']);
      expect(paths['/api/console/events']!['get']!.responses['200']!.content!['text/event-stream']).toBeDefined();
      expect(paths['/api/events']!['get']!.responses['400']!.content!['application/json']!.schema['x-error-codes']).toEqual([
        'BAD_REQUEST',
        'REQUEST_JSON_TOO_COMPLEX',
      ]);
      expect(paths['/api/console/messages']!['post']!.responses['503']!.content!['application/json']!.schema['x-error-codes']).toEqual([
        'STORE_UNAVAILABLE',
        'EVENTS_OVERLOADED',
      ]);
      expect(paths['/api/console/messages']!['post']!.responses['200']!.content!['application/json']!.schema).toEqual(
        expect.objectContaining({ type: 'object' }),
      );
      const chatEvents = paths['/api/console/chat-events']!['post']!;
      // The body's schema, with the event types and the click's limits.
      const body = (chatEvents as { requestBody?: { content: Record<string, { schema: unknown }> } }).requestBody!.content[
        'application/json'
      ]!.schema;
      expect(JSON.stringify(body)).toMatch(/"enum":\["interaction\.created","bot\.added","bot\.removed","conversation\.opened"\]/);
      expect(JSON.stringify(body)).toContain('"maxLength":512');
      expect(chatEvents.responses['400']!.content!['application/json']!.schema['x-error-codes']).toEqual(
        expect.arrayContaining(['BAD_REQUEST', 'REQUEST_JSON_TOO_COMPLEX']),
      );
    } finally {
      await host.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('store selection', () => {
  it('refuses a store kind it does not have before touching the data directory', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'compose-store-'));
    try {
      await expect(
        composeHost({ paths: hostPaths(dataDir), store: 'postgres', adminToken: TOKEN, version: '0.0.0-test', log: () => undefined }),
      ).rejects.toThrow(/HOST_STORE is "postgres", which is not a store this host has\. Use "file"/);
      expect(readdirSync(dataDir)).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('event log across restarts', () => {
  it('shows the events of the previous run, with their completion times', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'compose-events-'));
    const start = () =>
      composeHost({
        paths: hostPaths(dataDir),
        adminToken: TOKEN,
        version: '0.0.0-test',
        log: () => undefined,
        httpHealthCheckMilliseconds: 0,
      });
    try {
      const first = await start();
      const sent = await request(first.app)
        .post('/api/console/messages')
        .set(auth)
        .send({ conversation: { type: 'group', id: 'g1' }, sender: { id: 'u1' }, text: 'before the restart' });
      expect(sent.status).toBe(200);
      const before = (await request(first.app).get('/api/events').set(auth)).body.events;
      await first.close();

      const second = await start();
      try {
        const after = (await request(second.app).get('/api/events').set(auth)).body.events;
        expect(after).toEqual(before);
        expect(after[0]).toMatchObject({
          eventId: sent.body.eventId,
          completedAt: expect.any(String),
          event: { message: { content: 'before the restart' } },
        });
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
