import diagnostics from 'node:diagnostics_channel';
import type { HttpPluginRecord, OutboundSink } from '@host/host-core';
import { HTTP_HEADERS, HttpManifestSchema, MessageEventSchema } from '@host/protocol';
import { DEFAULT_RETRY_BACKOFF, HttpPluginEndpoint, type HttpEndpointOptions } from './endpoint';
import type { Resolver } from './pinned-connector';
import { verifySignature } from '@host/protocol/node';
import { generateSigningSecret } from './signing';
import { closedPort, manifest, messageEvent, OK_RESPONSE, sendJson, startServer, type Handler, type TestServer } from './test-servers';

const servers: TestServer[] = [];
const endpoints: HttpPluginEndpoint[] = [];
afterEach(async () => {
  await Promise.all(endpoints.splice(0).map((e) => e.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(handler: Handler, ...rest: [] | [string]): Promise<TestServer> {
  const s = await startServer(handler, ...rest);
  servers.push(s);
  return s;
}

function endpointFor(
  baseUrl: string,
  options: HttpEndpointOptions = {},
  requestTimeoutMilliseconds?: number,
): { endpoint: HttpPluginEndpoint; record: HttpPluginRecord } {
  const record: HttpPluginRecord = {
    transport: 'http',
    pluginId: 'com.example.echo',
    manifest: HttpManifestSchema.parse(manifest()),
    baseUrl,
    signingSecret: generateSigningSecret(),
    installedAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    enabled: true,
    ...(requestTimeoutMilliseconds ? { requestTimeoutMilliseconds } : {}),
  };
  const endpoint = new HttpPluginEndpoint(record, options);
  endpoints.push(endpoint);
  return { endpoint, record };
}

const sink: OutboundSink = { send: async () => ({ accepted: true, target: { type: 'group', id: 'group-1' } }) };
const event = MessageEventSchema.parse(messageEvent());

describe('retries', () => {
  it('retries 503 twice with about 200 ms then 800 ms backoff and the same delivery id', async () => {
    const at: number[] = [];
    const s = await serve((_req, res) => {
      at.push(performance.now());
      if (at.length <= 2) sendJson(res, 503, { error: 'starting' });
      else sendJson(res, 200, OK_RESPONSE);
    });
    const { endpoint, record } = endpointFor(s.url);
    const outcome = await endpoint.deliver(event, sink).decision;
    expect(outcome).toMatchObject({ accepted: true, error: null });
    expect(s.requests).toHaveLength(3);
    const ids = s.requests.map((r) => r.headers[HTTP_HEADERS.deliveryId]);
    expect(new Set(ids).size).toBe(1);
    for (const r of s.requests)
      expect(verifySignature({ secrets: [record.signingSecret], rawBody: r.body, headers: r.headers })).toMatchObject({ ok: true });
    // 200 ms and 800 ms, each less up to a fifth at random (and a few ms of timer slack).
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(150);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(630);
    expect(endpoint.health().status).toBe('healthy');
  });

  it('stops after 2 retries and reports the last status', async () => {
    const s = await serve((_req, res) => sendJson(res, 502, 'bad gateway', 'text/plain'));
    const { endpoint } = endpointFor(s.url, { retryBackoff: { baseMilliseconds: 10, factor: 1, maxMilliseconds: 10 } });
    const outcome = await endpoint.deliver(event, sink).decision;
    expect(outcome.error).toMatchObject({ code: 'http.status', message: expect.stringMatching(/502 on 3 tries/) });
    expect(s.requests).toHaveLength(3);
  });

  it('does not retry beyond the request timeout', async () => {
    const s = await serve((_req, res) => sendJson(res, 504, 'timeout', 'text/plain'));
    const { endpoint } = endpointFor(s.url, { retryBackoff: DEFAULT_RETRY_BACKOFF }, 500);
    const outcome = await endpoint.deliver(event, sink).decision;
    expect(outcome.error).toMatchObject({ code: 'http.status' });
    expect(s.requests).toHaveLength(2);
  });

  it('retries a refused connection, and delivers once the plugin listens', async () => {
    const port = await closedPort();
    const { endpoint } = endpointFor(`http://127.0.0.1:${port}`);
    let started: Promise<TestServer> | undefined;
    const onError = () => {
      started ??= serveOn(port);
    };
    diagnostics.subscribe('undici:client:connectError', onError);
    try {
      const outcome = await endpoint.deliver(event, sink).decision;
      expect(outcome).toMatchObject({ accepted: true, error: null });
      expect((await started!).requests).toHaveLength(1);
    } finally {
      diagnostics.unsubscribe('undici:client:connectError', onError);
    }
  });

  it('reports a plugin that stays down as http.unreachable after 3 connection attempts', async () => {
    const port = await closedPort();
    let attempts = 0;
    const count = () => attempts++;
    diagnostics.subscribe('undici:client:connectError', count);
    try {
      const { endpoint } = endpointFor(`http://127.0.0.1:${port}`, {
        retryBackoff: { baseMilliseconds: 10, factor: 1, maxMilliseconds: 10 },
      });
      const outcome = await endpoint.deliver(event, sink).decision;
      expect(outcome.error).toMatchObject({ code: 'http.unreachable', message: expect.stringMatching(/ECONNREFUSED/) });
      expect(attempts).toBe(3);
      expect(endpoint.health()).toMatchObject({ status: 'degraded', lastError: { code: 'http.unreachable' } });
    } finally {
      diagnostics.unsubscribe('undici:client:connectError', count);
    }
  });

  it('retries a connection that timed out before sending, within the request timeout', async () => {
    let lookups = 0;
    const resolver: Resolver = () => {
      lookups++;
      return new Promise(() => undefined);
    };
    const { endpoint } = endpointFor('http://slow-dns.test', {
      resolver,
      connectTimeoutMilliseconds: 50,
      retryBackoff: { baseMilliseconds: 10, factor: 1, maxMilliseconds: 10 },
    });
    const outcome = await endpoint.deliver(event, sink).decision;
    expect(outcome.error).toMatchObject({ code: 'http.timeout', message: expect.stringMatching(/Resolving slow-dns\.test timed out/) });
    expect(lookups).toBe(3);
  });

  it('never repeats a request the plugin may have received (connection dropped after sending)', async () => {
    const s = await serve((_req, res) => {
      res.socket?.destroy();
    });
    const { endpoint } = endpointFor(s.url, { retryBackoff: { baseMilliseconds: 10, factor: 1, maxMilliseconds: 10 } });
    const outcome = await endpoint.deliver(event, sink).decision;
    expect(outcome.error).toMatchObject({ code: 'http.unreachable' });
    expect(s.requests).toHaveLength(1);
  });

  async function serveOn(port: number): Promise<TestServer> {
    const s = await startServer((_req, res) => sendJson(res, 200, OK_RESPONSE), '127.0.0.1', port);
    servers.push(s);
    return s;
  }
});

describe('circuit breaker', () => {
  type Mode = 'stall' | 'fail' | 'ok';

  /** The endpoint's clock, moved by the test: the circuit's open period passes when the test says, not after a sleep. */
  function manualClock(): { now: () => number; pass(ms: number): void } {
    let t = Date.parse('2026-01-01T00:00:00.000Z');
    return { now: () => t, pass: (ms) => (t += ms) };
  }

  async function flakyServer(): Promise<{ server: TestServer; set(mode: Mode): void }> {
    let mode: Mode = 'ok';
    const server = await serve((_req, res) => {
      if (mode === 'ok') sendJson(res, 200, OK_RESPONSE);
      else if (mode === 'fail') sendJson(res, 500, 'down', 'text/plain');
      // stall: never answer
    });
    return { server, set: (m) => (mode = m) };
  }

  it('opens after 5 failures, fails fast while open, probes, and closes when the plugin recovers', async () => {
    const flaky = await flakyServer();
    const clock = manualClock();
    const { endpoint } = endpointFor(flaky.server.url, { circuit: { openMilliseconds: 300 }, now: clock.now }, 150);

    flaky.set('stall');
    for (let i = 1; i <= 4; i++) {
      expect((await endpoint.deliver(event, sink).decision).error).toMatchObject({ code: 'http.timeout' });
      expect(endpoint.health()).toMatchObject({ status: 'degraded', circuit: 'closed', consecutiveFailures: i });
    }
    expect((await endpoint.deliver(event, sink).decision).error).toMatchObject({ code: 'http.timeout' });
    expect(endpoint.health()).toMatchObject({ status: 'unreachable', circuit: 'open', lastError: { code: 'http.timeout' } });
    expect(endpoint.isAvailable()).toBe(false);

    // Open: rejected at once, the plugin sees nothing.
    const seen = flaky.server.requests.length;
    expect((await endpoint.deliver(event, sink).decision).error).toMatchObject({ code: 'http.circuit_open' });
    expect(flaky.server.requests).toHaveLength(seen);

    // The probe fails: open again for another period.
    flaky.set('fail');
    clock.pass(320);
    expect(endpoint.isAvailable()).toBe(true);
    expect((await endpoint.deliver(event, sink).decision).error).toMatchObject({ code: 'http.status' });
    expect(endpoint.health()).toMatchObject({ circuit: 'open', status: 'unreachable', lastError: { code: 'http.status' } });
    expect((await endpoint.deliver(event, sink).decision).error).toMatchObject({ code: 'http.circuit_open' });

    // Recovered: the next probe succeeds and closes the circuit.
    flaky.set('ok');
    clock.pass(320);
    expect(await endpoint.deliver(event, sink).decision).toMatchObject({ accepted: true, error: null });
    expect(endpoint.health()).toMatchObject({ circuit: 'closed', consecutiveFailures: 0, status: 'degraded' });
    expect(endpoint.isAvailable()).toBe(true);
  });

  it('lets exactly one probe through when half-open', async () => {
    const flaky = await flakyServer();
    const clock = manualClock();
    const { endpoint } = endpointFor(flaky.server.url, { circuit: { openMilliseconds: 100, failureThreshold: 1 }, now: clock.now }, 150);
    flaky.set('fail');
    await endpoint.deliver(event, sink).decision;
    expect(endpoint.health().circuit).toBe('open');
    flaky.set('ok');
    clock.pass(120);
    const before = flaky.server.requests.length;
    const [a, b] = await Promise.all([endpoint.deliver(event, sink).decision, endpoint.deliver(event, sink).decision]);
    expect([a.error?.code ?? 'ok', b.error?.code ?? 'ok'].sort()).toEqual(['http.circuit_open', 'ok']);
    expect(flaky.server.requests.length - before).toBe(1);
  });

  it('a health check brings an idle plugin back once it answers its manifest', async () => {
    const flaky = await flakyServer();
    const clock = manualClock();
    const { endpoint } = endpointFor(flaky.server.url, { circuit: { openMilliseconds: 100, failureThreshold: 2 }, now: clock.now }, 150);
    flaky.set('fail');
    await endpoint.checkHealth();
    expect((await endpoint.checkHealth()).circuit).toBe('open');
    flaky.set('ok');
    expect((await endpoint.checkHealth()).circuit).toBe('open'); // not due yet
    clock.pass(120);
    expect(await endpoint.checkHealth()).toMatchObject({ circuit: 'closed', consecutiveFailures: 0 });
    expect(flaky.server.requests.at(-1)).toMatchObject({ method: 'GET', path: '/host/plugin/manifest' });
  });
});

describe('address pinning on delivery', () => {
  it('re-checks each new connection: a name rebound to the metadata address is refused, never connected', async () => {
    const s = await serve((_req, res) => {
      res.setHeader('connection', 'close');
      sendJson(res, 200, OK_RESPONSE);
    });
    const answers = ['127.0.0.1', '169.254.169.254'];
    const calls: string[] = [];
    const resolver: Resolver = async (host) => {
      calls.push(host);
      const address = answers[Math.min(calls.length - 1, 1)]!;
      return [{ address, family: 4 }];
    };
    const { endpoint } = endpointFor(`http://plugin.test:${s.port}`, { resolver });
    expect(await endpoint.deliver(event, sink).decision).toMatchObject({ accepted: true });
    const second = await endpoint.deliver(event, sink).decision;
    expect(second.error).toMatchObject({ code: 'http.address_refused', message: expect.stringMatching(/169\.254\.169\.254/) });
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]!.headers.host).toBe(`plugin.test:${s.port}`);
    expect(calls).toEqual(['plugin.test', 'plugin.test']);
  });
});
