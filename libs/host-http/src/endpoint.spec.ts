import type { HttpPluginRecord, OutboundRequest, OutboundSink } from '@host/host-core';
import { HTTP_HEADERS, HttpManifestSchema, LIMITS, MessageEventSchema, type MessageEvent } from '@host/protocol';
import { HttpPluginEndpoint, type HttpEndpointOptions } from './endpoint';
import { verifySignature } from '@host/protocol/node';
import { generateSigningSecret } from './signing';
import { manifest, messageEvent, OK_RESPONSE, sendJson, startServer, type Handler, type TestServer } from './test-servers';

const servers: TestServer[] = [];
const endpoints: HttpPluginEndpoint[] = [];
afterEach(async () => {
  await Promise.all(endpoints.splice(0).map((e) => e.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(handler: Handler): Promise<TestServer> {
  const s = await startServer(handler);
  servers.push(s);
  return s;
}

function record(baseUrl: string, overrides: Partial<HttpPluginRecord> & { capabilities?: number } = {}): HttpPluginRecord {
  const { capabilities = 9, ...rest } = overrides;
  return {
    transport: 'http',
    pluginId: 'com.example.echo',
    manifest: HttpManifestSchema.parse(
      manifest({ capabilities, permissions: capabilities & 2 ? ['messages.reply', 'messages.send'] : ['messages.reply'] }),
    ),
    baseUrl,
    signingSecret: generateSigningSecret(),
    installedAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    enabled: true,
    ...rest,
  };
}

function endpoint(rec: HttpPluginRecord, options: HttpEndpointOptions = {}): HttpPluginEndpoint {
  const e = new HttpPluginEndpoint(rec, options);
  endpoints.push(e);
  return e;
}

/** Records what the endpoint hands to the host's outbound path. */
class RecordingSink implements OutboundSink {
  readonly sent: OutboundRequest[] = [];
  constructor(private readonly refuse?: (r: OutboundRequest) => Error | undefined) {}
  async send(request: OutboundRequest) {
    const error = this.refuse?.(request);
    if (error) throw error;
    this.sent.push(request);
    return { accepted: true, target: request.target ?? { type: 'group' as const, id: 'group-1' } };
  }
}

const event: MessageEvent = MessageEventSchema.parse(messageEvent());
const text = (t: string) => ({ format: 'text', parts: [{ type: 'text', text: t }] });

describe('HttpPluginEndpoint delivery', () => {
  it('POSTs the event signed per the spec and returns the outcome', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, OK_RESPONSE));
    const rec = record(s.url);
    const outcome = await endpoint(rec).deliver(event, new RecordingSink()).decision;
    expect(outcome).toMatchObject({ pluginId: 'com.example.echo', accepted: true, intercepted: false, error: null });
    const req = s.requests[0]!;
    expect(req).toMatchObject({ method: 'POST', path: '/host/plugin/events/message' });
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers[HTTP_HEADERS.pluginId]).toBe('com.example.echo');
    expect(req.headers[HTTP_HEADERS.protocolVersion]).toBe('2');
    expect(JSON.parse(req.body.toString())).toEqual(JSON.parse(JSON.stringify(event)));
    expect(verifySignature({ secrets: [rec.signingSecret], rawBody: req.body, headers: req.headers })).toMatchObject({ ok: true });
  });

  it('hands replies and sends to the sink in order; sends need SendMessages', async () => {
    const outboundMessages = [
      text('first'),
      { ...text('same conversation'), target: { type: 'group', id: 'group-1' } },
      { ...text('elsewhere'), target: { type: 'group', id: 'group-2' } },
      {
        format: 'markdown',
        parts: [
          { type: 'mention', target: 'user', id: 'user-1' },
          { type: 'text', text: ' hi' },
        ],
      },
    ];
    const s = await serve((_req, res) => sendJson(res, 200, { ...OK_RESPONSE, outboundMessages }));
    const allowed = endpoint(record(s.url, { capabilities: 11 }));
    const sink = new RecordingSink();
    await allowed.deliver(event, sink).decision;
    await allowed.idle();
    expect(sink.sent.map((r) => [r.kind, r.eventId, r.target?.id, r.message.format])).toEqual([
      ['reply', 'evt-1', undefined, 'text'],
      ['reply', 'evt-1', undefined, 'text'],
      ['send', 'evt-1', 'group-2', 'text'],
      ['reply', 'evt-1', undefined, 'markdown'],
    ]);

    const notAllowed = endpoint(record(s.url, { capabilities: 9 }));
    const sink2 = new RecordingSink();
    await notAllowed.deliver(event, sink2).decision;
    await notAllowed.idle();
    expect(sink2.sent.map((r) => r.kind)).toEqual(['reply', 'reply', 'reply']);
    expect(notAllowed.health().lastWarning).toMatchObject({ code: 'http.outbound.send_not_allowed' });
  });

  it('keeps sending after the sink refuses one message, and records the refusal', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, { ...OK_RESPONSE, outboundMessages: [text('bad'), text('good')] }));
    const e = endpoint(record(s.url));
    const sink = new RecordingSink((r) =>
      r.message.parts[0]?.type === 'text' && r.message.parts[0].text === 'bad'
        ? Object.assign(new Error('The message has no content.'), { code: 'message.empty' })
        : undefined,
    );
    const appended: string[] = [];
    const logged = endpoint(record(s.url), {
      logs: { append: (_id, line) => appended.push(line.message), tail: async () => [], flush: async () => undefined },
    });
    await e.deliver(event, sink).decision;
    await logged.deliver(event, sink).decision;
    await Promise.all([e.idle(), logged.idle()]);
    expect(sink.sent.map((r) => (r.message.parts[0] as { text: string }).text)).toEqual(['good', 'good']);
    expect(e.health().lastWarning).toMatchObject({ code: 'message.empty' });
    expect(appended).toEqual([expect.stringMatching(/^message\.empty: event evt-1, outboundMessages\[0\]/)]);
  });

  it('honours intercepted only with the InterceptMessages capability', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, { ...OK_RESPONSE, intercepted: true }));
    expect((await endpoint(record(s.url, { capabilities: 13 })).deliver(event, new RecordingSink()).decision).intercepted).toBe(true);
    const without = endpoint(record(s.url, { capabilities: 9 }));
    expect((await without.deliver(event, new RecordingSink()).decision).intercepted).toBe(false);
    expect(without.health().lastWarning).toMatchObject({ code: 'http.intercept.not_allowed' });
  });

  it("passes the plugin's own error through without counting it against health", async () => {
    const s = await serve((_req, res) =>
      sendJson(res, 200, { ...OK_RESPONSE, accepted: false, error: { code: 'weather.down', message: 'upstream down' } }),
    );
    const e = endpoint(record(s.url));
    expect(await e.deliver(event, new RecordingSink()).decision).toMatchObject({
      accepted: false,
      error: { code: 'weather.down', message: 'upstream down' },
    });
    expect(e.health()).toMatchObject({ status: 'healthy', lastError: null });
  });

  it.each([
    ['not JSON', 'http.response.invalid', (res: Parameters<Handler>[1]) => sendJson(res, 200, 'ok', 'application/json'), /not valid JSON/],
    [
      'a wrong content type',
      'http.response.invalid',
      (res: Parameters<Handler>[1]) => sendJson(res, 200, OK_RESPONSE, 'text/plain'),
      /content-type "text\/plain"/,
    ],
    [
      'a missing field',
      'http.response.invalid',
      (res: Parameters<Handler>[1]) => sendJson(res, 200, { accepted: true, outboundMessages: [], error: null }),
      /"intercepted" is required/,
    ],
    [
      'too many outbound messages',
      'http.response.invalid',
      (res: Parameters<Handler>[1]) =>
        sendJson(res, 200, { ...OK_RESPONSE, outboundMessages: Array.from({ length: LIMITS.maxOutboundMessages + 1 }, () => text('x')) }),
      /outboundMessages/,
    ],
    [
      'a body nested 6,000 levels deep',
      'http.response.too_complex',
      (res: Parameters<Handler>[1]) =>
        sendJson(res, 200, JSON.stringify(OK_RESPONSE).replace(/}$/, `,"pad":${'['.repeat(6000)}${']'.repeat(6000)}}`)),
      /deeper than 64 levels/,
    ],
    [
      'a body over 1 MiB',
      'http.response.too_large',
      (res: Parameters<Handler>[1]) => sendJson(res, 200, { ...OK_RESPONSE, pad: 'x'.repeat(LIMITS.maxHttpResponseBytes) }),
      /larger than 1048576/,
    ],
    [
      '401',
      'http.signature_rejected',
      (res: Parameters<Handler>[1]) => sendJson(res, 401, { error: { code: 'signature.invalid' } }),
      /signing secret/,
    ],
    ['500', 'http.status', (res: Parameters<Handler>[1]) => sendJson(res, 500, 'boom', 'text/plain'), /answered 500/],
    [
      'a redirect',
      'http.status',
      (res: Parameters<Handler>[1]) => {
        res.writeHead(307, { location: 'http://elsewhere.test/' });
        res.end();
      },
      /redirects are not followed/,
    ],
  ])('reports %s as %s, without retrying', async (_name, code, answer, message) => {
    const s = await serve((_req, res) => answer(res));
    const e = endpoint(record(s.url));
    const outcome = await e.deliver(event, new RecordingSink()).decision;
    expect(outcome).toMatchObject({ accepted: false, intercepted: false, error: { code } });
    expect(outcome.error!.message).toMatch(message);
    expect(s.requests).toHaveLength(1);
    expect(e.health()).toMatchObject({ status: 'degraded', consecutiveFailures: 1, lastError: { code } });
  });

  it('gives up at the request timeout, and a slow plugin does not hold up another', async () => {
    const slow = await serve(() => undefined);
    const fast = await serve((_req, res) => sendJson(res, 200, OK_RESPONSE));
    const slowEndpoint = endpoint(record(slow.url, { requestTimeoutMilliseconds: 400 }));
    const fastEndpoint = endpoint(record(fast.url, { pluginId: 'com.example.fast' }));
    const order: string[] = [];
    const slowRun = slowEndpoint.deliver(event, new RecordingSink()).decision.then((o) => (order.push('slow'), o));
    const fastRun = fastEndpoint.deliver(event, new RecordingSink()).decision.then((o) => (order.push('fast'), o));
    const [slowOutcome, fastOutcome] = await Promise.all([slowRun, fastRun]);
    expect(order).toEqual(['fast', 'slow']);
    expect(fastOutcome.accepted).toBe(true);
    expect(slowOutcome.error).toMatchObject({ code: 'http.timeout' });
    expect(slowOutcome.error!.message).toMatch(/400 ms/);
    expect(slowOutcome.durationMs).toBeGreaterThanOrEqual(390);
    expect(slow.requests).toHaveLength(1);
  });
});
