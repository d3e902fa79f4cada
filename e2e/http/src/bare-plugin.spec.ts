import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express, { type ErrorRequestHandler } from 'express';
import request from 'supertest';
import { request as undiciRequest } from 'undici';
import { HostError, type OutboundRequest, type OutboundSink, type PluginEndpoint } from '@host/host-core';
import { createHttpRegistrationRouter, HttpPluginRegistry, signRequest, type HttpPluginRegistryDeps } from '@host/host-http';
import { JsonRegistryStore } from '@host/host-store';
import { ERROR_CATALOG, HTTP_HEADERS, MessageEventSchema, type MessageEvent } from '@host/protocol';
import { BARE_PLUGIN, startBarePlugin, type BarePlugin } from './bare-plugin';

const event: MessageEvent = MessageEventSchema.parse({
  eventId: 'evt-1',
  eventType: 'message.created',
  timestamp: '2026-01-01T00:00:00Z',
  source: 'console',
  bot: { botAccountId: 'bot-1', platform: 'console' },
  conversation: { type: 'group', conversationId: 'group-1' },
  sender: { provider: 'console', mentionId: 'user-1', displayName: 'Ada' },
  message: { id: 'msg-1', content: 'hello <b>', attachments: [], mentions: [] },
  messageReference: { messageId: 'msg-1', targetType: 'group', targetId: 'group-1', restrictions: [] },
});

class RecordingSink implements OutboundSink {
  readonly sent: OutboundRequest[] = [];
  async send(r: OutboundRequest) {
    this.sent.push(r);
    return { accepted: true, target: { type: 'group' as const, id: 'group-1' } };
  }
  texts(): string[] {
    return this.sent.map((r) => r.message.parts.map((p) => (p.type === 'text' ? p.text : '')).join(''));
  }
}

const plugins: BarePlugin[] = [];
let dir: string;
let store: JsonRegistryStore;
let endpoints: Map<string, PluginEndpoint>;
let registry: HttpPluginRegistry;

async function setUp(options: Partial<HttpPluginRegistryDeps> = {}) {
  dir = mkdtempSync(join(tmpdir(), 'e2e-http-'));
  store = await JsonRegistryStore.open(join(dir, 'state'));
  endpoints = new Map();
  registry = new HttpPluginRegistry({ store, endpoints, ...options });
}

async function bare(...args: string[]): Promise<BarePlugin> {
  const p = await startBarePlugin(...args);
  plugins.push(p);
  return p;
}

function api() {
  const app = express();
  app.use(express.json());
  app.use('/api', createHttpRegistrationRouter({ registry }));
  const onError: ErrorRequestHandler = (err, _req, res, _next) => {
    const e = err instanceof HostError ? err : new HostError('INTERNAL', String(err));
    res.status(e.status).json({ error: e.toJSON() });
  };
  app.use(onError);
  return app;
}

afterEach(async () => {
  await registry?.close();
  await Promise.all(plugins.splice(0).map((p) => p.dispose()));
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the bare spec-only plugin', () => {
  it('registers by URL, refuses events until given its secret, then replies', async () => {
    await setUp();
    const plugin = await bare();
    const res = await request(api()).post('/api/plugins/http').send({ baseUrl: plugin.url }).expect(201);
    expect(res.body.plugin).toMatchObject({ pluginId: 'com.example.bare-echo', health: { status: 'healthy' } });
    const endpoint = endpoints.get('com.example.bare-echo')!;

    const sink = new RecordingSink();
    const refused = await endpoint.deliver(event, sink).decision;
    expect(refused.error).toMatchObject({ code: 'http.signature_rejected', message: expect.stringMatching(/signature\.secret_unset/) });

    plugin.configureSecret(res.body.signingSecret);
    const outcome = await endpoint.deliver(event, sink).decision;
    expect(outcome).toMatchObject({ accepted: true, intercepted: false, error: null });
    await registry.endpoint('com.example.bare-echo')!.idle();
    expect(sink.sent).toEqual([
      {
        pluginId: 'com.example.bare-echo',
        kind: 'reply',
        eventId: 'evt-1',
        message: { format: 'text', parts: [{ type: 'text', text: 'echo: hello <b>' }] },
      },
    ]);
  });

  describe('checks the host signature as docs/protocol/http-signing.md says', () => {
    let plugin: BarePlugin;
    const secret = 'bare-plugin-test-secret';
    const body = JSON.stringify(event);

    beforeEach(async () => {
      await setUp();
      plugin = await bare();
      plugin.configureSecret(secret);
    });

    async function post(headers: Record<string, string>, raw = body) {
      const res = await undiciRequest(`${plugin.url}/host/plugin/events/message`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: raw,
      });
      return { status: res.statusCode, body: (await res.body.json()) as { error?: { code: string }; outboundMessages?: unknown[] } };
    }

    it('accepts a valid signature', async () => {
      const res = await post(signRequest(secret, body));
      expect(res.status).toBe(200);
      expect(res.body.outboundMessages).toHaveLength(1);
    });

    it('refuses a wrong secret and a changed body with 401', async () => {
      expect(await post(signRequest('another-secret', body))).toMatchObject({
        status: 401,
        body: { error: { code: 'signature.invalid' } },
      });
      expect(await post(signRequest(secret, body), body.replace('hello', 'HELLO'))).toMatchObject({
        status: 401,
        body: { error: { code: 'signature.invalid' } },
      });
    });

    it('refuses a stale timestamp with 401', async () => {
      const stale = signRequest(secret, body, { timestamp: Math.floor(Date.now() / 1000) - 301 });
      expect(await post(stale)).toMatchObject({ status: 401, body: { error: { code: 'signature.expired' } } });
    });

    it('accepts a signature list whose valid entry follows an invalid one (secret rotation)', async () => {
      const wrong = signRequest('another-secret', body);
      const right = signRequest(secret, body, {
        timestamp: Number(wrong[HTTP_HEADERS.timestamp]),
        deliveryId: wrong[HTTP_HEADERS.deliveryId],
      });
      const list = { ...right, [HTTP_HEADERS.signature]: `${wrong[HTTP_HEADERS.signature]},${right[HTTP_HEADERS.signature]}` };
      expect((await post(list)).status).toBe(200);
    });

    it('answers only with codes of the protocol catalogue', () => {
      const codes = [...readFileSync(BARE_PLUGIN, 'utf8').matchAll(/code: '([a-z_.]+)'/g)].map((m) => m[1]!);
      expect(codes.length).toBeGreaterThan(3);
      for (const code of codes) expect({ code, catalogued: code in ERROR_CATALOG }).toMatchObject({ catalogued: true });
    });

    it('refuses a replayed delivery id with 401', async () => {
      const headers = signRequest(secret, body);
      expect((await post(headers)).status).toBe(200);
      expect(await post(headers)).toMatchObject({ status: 401, body: { error: { code: 'signature.replayed' } } });
      // Same delivery id, freshly signed (what a host retry looks like) is still a replay once processed.
      const again = signRequest(secret, body, { deliveryId: headers[HTTP_HEADERS.deliveryId] });
      expect(await post(again)).toMatchObject({ status: 401, body: { error: { code: 'signature.replayed' } } });
    });

    it('refuses a request without signature headers', async () => {
      expect(await post({})).toMatchObject({ status: 401, body: { error: { code: 'signature.missing' } } });
    });
  });

  it('is reported unreachable while stopped, others keep answering, and it recovers when started again', async () => {
    await setUp({ retryBackoff: { baseMilliseconds: 20, factor: 1, maxMilliseconds: 20 }, circuit: { openMilliseconds: 400 } });
    const flaky = await bare();
    const steady = await bare('--plugin-id', 'com.example.steady');
    const flakyReg = await registry.register({ baseUrl: flaky.url });
    const steadyReg = await registry.register({ baseUrl: steady.url });
    flaky.configureSecret(flakyReg.signingSecret);
    steady.configureSecret(steadyReg.signingSecret);
    const flakyEndpoint = endpoints.get('com.example.bare-echo')!;
    const steadyEndpoint = endpoints.get('com.example.steady')!;
    expect((await flakyEndpoint.deliver(event, new RecordingSink()).decision).accepted).toBe(true);

    await flaky.stop();
    for (let i = 0; i < 5; i++) {
      const [down, up] = await Promise.all([
        flakyEndpoint.deliver(event, new RecordingSink()).decision,
        steadyEndpoint.deliver(event, new RecordingSink()).decision,
      ]);
      expect(down.error).toMatchObject({ code: 'http.unreachable' });
      expect(up).toMatchObject({ accepted: true, error: null });
    }
    expect((await registry.get('com.example.bare-echo')).health).toMatchObject({
      status: 'unreachable',
      circuit: 'open',
      lastError: { code: 'http.unreachable' },
    });
    expect((await registry.get('com.example.steady')).health).toMatchObject({ status: 'healthy' });
    expect(flakyEndpoint.isAvailable()).toBe(false);
    expect((await flakyEndpoint.deliver(event, new RecordingSink()).decision).error).toMatchObject({ code: 'http.circuit_open' });

    await flaky.restart();
    await new Promise((r) => setTimeout(r, 450));
    expect(flakyEndpoint.isAvailable()).toBe(true);
    const sink = new RecordingSink();
    expect(await flakyEndpoint.deliver(event, sink).decision).toMatchObject({ accepted: true, error: null });
    await registry.endpoint('com.example.bare-echo')!.idle();
    expect(sink.texts()).toEqual(['echo: hello <b>']);
    expect((await registry.get('com.example.bare-echo')).health).toMatchObject({ circuit: 'closed', consecutiveFailures: 0 });
  });
});
