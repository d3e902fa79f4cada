import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { HostError, hostPaths, type OutboundRequest, type PluginEndpoint } from '@host/host-core';
import { Dispatcher } from '@host/host-dispatch';
import { encodeFrame, RpcErrorCode } from '@host/protocol';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import { FilePluginLogStore } from '../logs/file-plugin-log-store';
import { FramedMessageReader, offendingBytes, type FramingFailure } from './framed-reader';
import { FramedMessageWriter } from './framed-writer';
import { createPluginRequestHandler } from './plugin-requests';

// The host side (strict framing) against a peer using vscode-jsonrpc's own
// stream reader and writer: the two framings interoperate.
function pair(onFailure: (f: FramingFailure) => void = () => undefined) {
  const toPlugin = new PassThrough();
  const toHost = new PassThrough();
  const host = createMessageConnection(new FramedMessageReader(toHost, onFailure), new FramedMessageWriter(toPlugin));
  const plugin = createMessageConnection(new StreamMessageReader(toPlugin), new StreamMessageWriter(toHost));
  return { host, plugin, toHost };
}

describe('framed connection', () => {
  const open: MessageConnection[] = [];
  afterEach(() => open.splice(0).forEach((c) => c.dispose()));

  it('carries requests both ways, concurrently', async () => {
    const { host, plugin } = pair();
    open.push(host, plugin);
    plugin.onRequest('plugin.ping', (p: { nonce: string }) => ({ nonce: p.nonce }));
    host.onRequest('log.write', (p: { message: string }) => ({ echoed: p.message }));
    host.listen();
    plugin.listen();
    const pings = await Promise.all(Array.from({ length: 50 }, (_, i) => host.sendRequest('plugin.ping', { nonce: `n${i}` })));
    expect(pings).toHaveLength(50);
    expect(pings[49]).toEqual({ nonce: 'n49' });
    expect(await plugin.sendRequest('log.write', { message: 'héllo ✓' })).toEqual({ echoed: 'héllo ✓' });
  });

  it('reports the first bytes that are not a frame', async () => {
    const failures: FramingFailure[] = [];
    const { host, toHost } = pair((f) => failures.push(f));
    open.push(host);
    host.listen();
    toHost.write('Loading model...\n');
    await new Promise((r) => setImmediate(r));
    expect(failures).toEqual([{ code: 'framing.header.malformed', message: expect.any(String), bytes: '"Loading model...\\n"' }]);
  });

  it('writes the same bytes as encodeFrame, multi-byte text included', async () => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    const message = { jsonrpc: '2.0' as const, id: 7, method: 'events.message', params: { text: 'héllo ✓ 😀 <b>' } };
    await new FramedMessageWriter(out).write(message);
    await new Promise((r) => setImmediate(r));
    expect(Buffer.concat(chunks)).toEqual(Buffer.from(encodeFrame(message)));
  });

  it('writes one event to several plugins as encodeFrame would for each, and an event changed in a later turn as changed', async () => {
    const outs = [new PassThrough(), new PassThrough()];
    const written = outs.map((out) => {
      const chunks: Buffer[] = [];
      out.on('data', (c: Buffer) => chunks.push(c));
      return chunks;
    });
    const writers = outs.map((out) => new FramedMessageWriter(out));
    const event: Record<string, unknown> = { eventId: 'e1', text: 'héllo ✓' };
    const request = (id: number | string) => ({ jsonrpc: '2.0' as const, id, method: 'events.message', params: event });
    await writers[0]!.write(request(1));
    await writers[1]!.write(request('b-1'));
    await new Promise((r) => setImmediate(r));
    event['text'] = 'changed';
    await writers[0]!.write(request(2));
    await new Promise((r) => setImmediate(r));
    expect(Buffer.concat(written[0]!).toString()).toBe(
      Buffer.concat([encodeFrame({ ...request(1), params: { eventId: 'e1', text: 'héllo ✓' } }), encodeFrame(request(2))]).toString(),
    );
    expect(Buffer.concat(written[1]!).toString()).toBe(
      Buffer.from(encodeFrame({ ...request('b-1'), params: { eventId: 'e1', text: 'héllo ✓' } })).toString(),
    );
  });

  it('points at the stray line among frames', () => {
    const chunk = Buffer.from('Content-Length: 2\r\n\r\n{}print(x)\r\nstray output\n');
    expect(offendingBytes(chunk).toString()).toBe('stray output\n');
  });
});

describe('plugin-to-host requests', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'plugin-requests-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function handler(permissions: ('messages.reply' | 'messages.send')[]) {
    const logs = new FilePluginLogStore(hostPaths(dir));
    // The sink reads permissions from the plugin's routing, as for any endpoint.
    const endpoint: PluginEndpoint = {
      pluginId: 'com.a.b',
      transport: 'stdio-jsonrpc',
      routing: () => ({ pluginId: 'com.a.b', eventSubscriptions: [], commands: [], permissions, canIntercept: false }),
      isAvailable: () => false,
      deliver: () => {
        throw new Error('not used');
      },
    };
    const dispatcher = new Dispatcher({ endpoints: () => [endpoint] });
    const completed: unknown[] = [];
    const onCompleted = (eventId: string, error: unknown, durationMs: number | undefined) => {
      completed.push({ eventId, error, durationMs });
      return eventId === 'e-running';
    };
    const handle = createPluginRequestHandler({
      pluginId: 'com.a.b',
      token: 't'.repeat(43),
      permissions,
      logs,
      deliveredHere: (eventId) => eventId === 'e-running',
      sink: dispatcher.sink,
      onCompleted,
    });
    return { handle, logs, completed };
  }

  it('passes events.completed to the runtime and answers whether it was awaited', async () => {
    const { handle, completed } = handler([]);
    expect(await handle('events.completed', { token, eventId: 'e-running', durationMs: 12 })).toEqual({ recorded: true });
    expect(await handle('events.completed', { token, eventId: 'e-gone', error: { code: 'x.failed', message: 'boom' } })).toEqual({
      recorded: false,
    });
    expect(completed).toEqual([
      { eventId: 'e-running', error: null, durationMs: 12 },
      { eventId: 'e-gone', error: { code: 'x.failed', message: 'boom' }, durationMs: undefined },
    ]);
    expect(((await handle('events.completed', { eventId: 'e-running' })) as { code: number }).code).toBe(RpcErrorCode.Unauthorized);
  });
  const token = 't'.repeat(43);

  it.each([
    ['messages.nope', { token }, RpcErrorCode.MethodNotFound],
    ['events.message', { token }, RpcErrorCode.MethodNotFound],
    ['log.write', { token: 'wrong', level: 'info', message: 'x' }, RpcErrorCode.Unauthorized],
    ['log.write', { level: 'info', message: 'x' }, RpcErrorCode.Unauthorized],
    ['log.write', { token, level: 'loud', message: 'x' }, RpcErrorCode.InvalidParams],
    ['messages.send', { token, target: { type: 'group', id: 'g' }, message: { parts: [] } }, RpcErrorCode.PermissionDenied],
    ['messages.reply', { token, eventId: 'e1', message: { parts: [{ type: 'text', text: 'x' }] } }, RpcErrorCode.MessageRejected],
  ])('%s %j -> %d', async (method, params, code) => {
    const { handle } = handler(['messages.reply']);
    const result = (await handle(method, params)) as { code: number; data?: unknown };
    expect(result.code).toBe(code);
  });

  it('names the missing permission and the refused message code', async () => {
    const { handle } = handler(['messages.reply']);
    const denied = (await handle('messages.send', { token, target: { type: 'group', id: 'g' }, message: { parts: [] } })) as {
      data: unknown;
    };
    expect(denied.data).toEqual({ code: 'message.permission.denied', permission: 'messages.send' });
    const rejected = (await handle('messages.reply', { token, eventId: 'e1', message: { parts: [{ type: 'text', text: 'x' }] } })) as {
      data: unknown;
    };
    expect(rejected.data).toEqual({ code: 'message.reference.unknown' });
    const invalid = (await handle('log.write', { token, level: 'loud', message: 'x' })) as { data: { issues: { path: string }[] } };
    expect(invalid.data.issues[0]!.path).toBe('level');
  });

  it("passes a provider's refusal on with what the provider said", async () => {
    const refusing = createPluginRequestHandler({
      pluginId: 'com.a.b',
      token,
      permissions: ['messages.reply'],
      logs: new FilePluginLogStore(hostPaths(dir)),
      sink: {
        send: async () => {
          throw new HostError('message.provider.rate_limited', 'the platform refused the message: rate limit (HTTP 429, code 22009)', {
            provider: 'qqbot',
            httpStatus: 429,
            providerCode: 22009,
          });
        },
      },
      onCompleted: () => false,
    });
    const result = (await refusing('messages.reply', { token, eventId: 'e1', message: { parts: [{ type: 'text', text: 'x' }] } })) as {
      code: number;
      data: unknown;
    };
    expect(result.code).toBe(RpcErrorCode.MessageRejected);
    expect(result.data).toEqual({ code: 'message.provider.rate_limited', provider: 'qqbot', httpStatus: 429, providerCode: 22009 });
  });

  it("hands messages.send's eventId to the sink as given (the sink checks it), and refuses one that is not a non-blank string", async () => {
    const seen: OutboundRequest[] = [];
    const handle = createPluginRequestHandler({
      pluginId: 'com.a.b',
      token,
      permissions: ['messages.send'],
      logs: new FilePluginLogStore(hostPaths(dir)),
      sink: {
        send: async (request) => {
          seen.push(request);
          return { accepted: true, target: request.target! };
        },
      },
      onCompleted: () => false,
    });
    const params = { token, target: { type: 'group', id: 'g' }, message: { parts: [{ type: 'text', text: 'x' }] } };
    await handle('messages.send', { ...params, eventId: 'e-1' });
    await handle('messages.send', params);
    expect(seen.map((r) => [r.pluginId, r.kind, r.eventId])).toEqual([
      ['com.a.b', 'send', 'e-1'],
      ['com.a.b', 'send', undefined],
    ]);
    for (const eventId of ['', '  ', 7]) {
      const refused = (await handle('messages.send', { ...params, eventId })) as { code: number; data: { issues: { path: string }[] } };
      expect(refused.code).toBe(RpcErrorCode.InvalidParams);
      expect(refused.data.issues.map((i) => i.path)).toEqual(['eventId']);
    }
    expect(seen).toHaveLength(2);
  });

  it('writes log.write lines to the plugin log', async () => {
    const { handle, logs } = handler([]);
    expect(await handle('log.write', { token, level: 'warn', message: 'disk low', fields: { free: 3 } })).toEqual({ accepted: true });
    expect(await logs.tail('com.a.b', 1)).toEqual([
      { at: expect.any(String), stream: 'log', level: 'warn', message: 'disk low', fields: { free: 3 } },
    ]);
  });

  it('keeps the eventId of a log.write line only for an event delivered to this process', async () => {
    const { handle, logs } = handler([]);
    await handle('log.write', { token, level: 'info', message: 'answered', eventId: 'e-running' });
    // Another plugin's event or a made-up id: the line is kept, the id is not.
    await handle('log.write', { token, level: 'info', message: 'claims another event', eventId: 'e-of-another-plugin' });
    await handle('log.write', { token, level: 'info', message: 'outside a handler' });
    expect((await logs.tail('com.a.b', 3)).map((l) => [l.message, l.eventId ?? null])).toEqual([
      ['answered', 'e-running'],
      ['claims another event', null],
      ['outside a handler', null],
    ]);
    expect((await logs.linesOfEvent('com.a.b', 'e-running', 10)).map((l) => l.message)).toEqual(['answered']);
    expect(await logs.linesOfEvent('com.a.b', 'e-of-another-plugin', 10)).toEqual([]);
    for (const eventId of ['', 7]) {
      const refused = (await handle('log.write', { token, level: 'info', message: 'x', eventId })) as { code: number };
      expect(refused.code).toBe(RpcErrorCode.InvalidParams);
    }
  });
});
