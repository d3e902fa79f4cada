import { FrameDecoder, RELEASE_VERSIONS, RpcErrorCode, encodeFrame, type JsonRpcRequest, type JsonRpcResponse } from '@host/protocol';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { StdioHost, initParams, messageEvent } from './stdio-host.spec-helper';
import { definePlugin } from '../define-plugin';
import { runStdio } from './runtime';

// These tests drive real plugin processes built on the SDK's dist/ output
// (the test target depends on the build target).
const CJS = join(__dirname, '../../test-fixtures/stdio-plugin.cjs');
const ESM = join(__dirname, '../../test-fixtures/stdio-plugin.mjs');

const hosts: StdioHost[] = [];
function start(entry = CJS, args?: string[]): StdioHost {
  const host = new StdioHost(entry, args);
  hosts.push(host);
  return host;
}
afterEach(() => {
  for (const h of hosts.splice(0)) h.kill();
});

async function ready(over: Record<string, unknown> = {}, entry = CJS): Promise<StdioHost> {
  const host = start(entry);
  const res = await host.request('host.initialize', host.initParams(over));
  expect(res.error).toBeUndefined();
  return host;
}

const isRequest = (method: string) => (m: unknown) => (m as JsonRpcRequest).method === method;
const ackOf = (host: StdioHost, id: string) => host.waitFor((m) => !('method' in m) && m.id === id) as Promise<JsonRpcResponse>;
const completionOf = (host: StdioHost, eventId: string) =>
  host.waitFor(
    (m) => isRequest('events.completed')(m) && (m as JsonRpcRequest & { params: { eventId: string } }).params.eventId === eventId,
  ) as Promise<JsonRpcRequest>;
const logged = (host: StdioHost, message: string) =>
  host.waitFor(
    (m) => isRequest('log.write')(m) && (m as JsonRpcRequest & { params: { message: string } }).params.message === message,
  ) as Promise<JsonRpcRequest>;
const sendEvent = (host: StdioHost, id: string, text: string, command?: { name: string; args: string }) =>
  host.write({ jsonrpc: '2.0', id, method: 'events.message', params: messageEvent(id, text, command) });
/** What the plugin wrote, in order: requests by method, answers to events.message as `ack:<id>`. */
const trace = (host: StdioHost, ids: string[]) =>
  host.messages.flatMap((m) => ('method' in m ? [m.method] : ids.includes(String(m.id)) ? [`ack:${String(m.id)}`] : []));

describe('stdio runtime in a real process', () => {
  it("without --host-stdio prints help to stderr and exits 2 (stdout keeps only the program's own prints)", async () => {
    const host = start(CJS, []);
    expect(await host.exited).toEqual({ code: 2, signal: null });
    expect(host.stdout).toBe('module loaded\nraw stdout write\n');
    expect(host.stderr).toMatch(/Fixture 1\.0\.0 \(com\.example\.fixture\).*--host-stdio/s);
  });

  it('refuses everything before host.initialize with NotInitialized', async () => {
    const host = start();
    expect((await host.request('plugin.ping', {})).error?.code).toBe(RpcErrorCode.NotInitialized);
    expect((await host.request('events.message', messageEvent('e1', 'hi'))).error?.code).toBe(RpcErrorCode.NotInitialized);
  });

  it('answers host.initialize with its identity, once', async () => {
    const host = start();
    const res = await host.request('host.initialize', host.initParams());
    expect(res.result).toEqual({
      protocolVersion: 2,
      pluginId: 'com.example.fixture',
      sdkName: '@host/plugin-sdk-v2',
      sdkVersion: RELEASE_VERSIONS.sdkVersion,
      capabilities: ['events.message', 'events.deliver', 'events.cancel', 'plugin.stop', 'plugin.ping', 'settings.changed'],
      encoding: 'json',
    });
    expect((await host.request('host.initialize', host.initParams())).error?.code).toBe(RpcErrorCode.AlreadyInitialized);
    const started = (await host.waitFor(isRequest('log.write'))) as JsonRpcRequest;
    expect(started.params).toEqual({ token: 't'.repeat(40), level: 'info', message: 'started', fields: { settings: { greeting: 'hi' } } });
  });

  it('lists invalid handshake params with their paths', async () => {
    const host = start();
    const res = await host.request('host.initialize', host.initParams({ token: 'short' }));
    expect(res.error).toMatchObject({ code: RpcErrorCode.InvalidParams, data: { issues: [{ path: 'token' }] } });
  });

  it('answers a handshake for another plugin with an error and exits 1', async () => {
    const host = start();
    const res = await host.request('host.initialize', host.initParams({ pluginId: 'com.example.other' }));
    expect(res.error).toMatchObject({
      code: RpcErrorCode.PluginError,
      message: expect.stringMatching(/is for plugin "com.example.other"/),
    });
    expect((await host.exited).code).toBe(1);
  });

  it('ACKs on admission, before the handler replies, then reports events.completed; every print stays off stdout', async () => {
    const host = await ready();
    const ack = await host.request('events.message', messageEvent('e1', '/echo <hi>', { name: 'echo', args: '<hi>' }));
    expect(ack.result).toEqual({ eventId: 'e1', accepted: true, intercepted: false, error: null });
    const completed = await completionOf(host, 'e1');
    expect(completed.params).toEqual({ token: 't'.repeat(40), eventId: 'e1', error: null, durationMs: expect.any(Number) });
    expect(trace(host, [String(ack.id)]).filter((m) => m !== 'log.write')).toEqual([
      `ack:${String(ack.id)}`,
      'messages.reply',
      'events.completed',
    ]);
    expect((host.messages.find(isRequest('messages.reply')) as JsonRpcRequest).params).toEqual({
      token: 't'.repeat(40),
      eventId: 'e1',
      message: {
        format: 'markdown',
        parts: [
          { type: 'mention', target: 'user', id: 'user-1', displayName: 'Ann' },
          { type: 'text', text: ' said <hi>' },
        ],
      },
    });
    // Every byte on stdout decoded as a frame; the prints went to stderr.
    expect(host.received.every((e) => e.kind === 'message')).toBe(true);
    expect(host.stderr).toMatch(/module loaded[\s\S]*raw stdout write[\s\S]*onStart ran[\s\S]*handler console.log/);
  });

  it('ACKs before a slow handler ends; the completion follows when it ends', async () => {
    const host = await ready();
    const sent = Date.now();
    const ack = await host.request('events.message', messageEvent('s', '/slow 400', { name: 'slow', args: '400' }));
    expect(Date.now() - sent).toBeLessThan(300);
    expect(ack.result).toEqual({ eventId: 's', accepted: true, intercepted: false, error: null });
    expect(host.messages.some(isRequest('events.completed'))).toBe(false);
    expect((await completionOf(host, 's')).params).toMatchObject({ eventId: 's', error: null, durationMs: expect.any(Number) });
    expect(((await completionOf(host, 's')).params as { durationMs: number }).durationMs).toBeGreaterThanOrEqual(390);
    expect(trace(host, [String(ack.id)]).filter((m) => m !== 'log.write')).toEqual([
      `ack:${String(ack.id)}`,
      'messages.reply',
      'events.completed',
    ]);
  });

  it('answers events without a handler with accepted: false at once, and nothing follows', async () => {
    const host = await ready();
    const ack = await host.request('events.message', messageEvent('n', '/unknown', { name: 'unknown', args: '' }));
    expect(ack.result).toEqual({ eventId: 'n', accepted: false, intercepted: false, error: null });
    expect((await host.request('plugin.ping', {})).result).toEqual({ inFlightEvents: 0, queuedEvents: 0 });
    expect(host.messages.some(isRequest('events.completed'))).toBe(false);
  });

  it('turns a host refusal into a PluginMessageError the handler can catch', async () => {
    const host = await ready();
    host.answer = (req) =>
      req.method === 'messages.reply'
        ? { error: { code: RpcErrorCode.MessageRejected, message: 'reply window closed', data: { code: 'message.reference.expired' } } }
        : { result: { accepted: true } };
    await host.request('events.message', messageEvent('e1', '/catch', { name: 'catch', args: '' }));
    const caught = (await host.waitFor(
      (m) => isRequest('log.write')(m) && (m as JsonRpcRequest & { params: { message: string } }).params.message === 'caught',
    )) as JsonRpcRequest;
    expect((caught.params as { fields: unknown }).fields).toEqual({
      name: 'PluginMessageError',
      code: 'message.reference.expired',
      fromHost: true,
    });
  });

  it('names the event in messages.send made inside a handler (with its bot), and none for a send outside one', async () => {
    const host = await ready({ settings: { greeting: 'hi', startSendTo: 'g-start' } });
    host.answer = (req) =>
      req.method === 'messages.send' ? { result: { accepted: true, target: (req.params as { target: unknown }).target } } : { result: {} };
    const outside = (await host.waitFor(isRequest('messages.send'))) as JsonRpcRequest;
    expect(outside.params).toEqual({
      token: 't'.repeat(40),
      target: { type: 'group', id: 'g-start' },
      message: { format: 'text', parts: [{ type: 'text', text: 'from onStart' }] },
    });
    await host.request('events.message', messageEvent('e7', '/send g-9', { name: 'send', args: 'g-9' }));
    await completionOf(host, 'e7');
    const sends = host.messages.filter(isRequest('messages.send')) as JsonRpcRequest[];
    expect(sends.map((m) => m.params)).toEqual([
      outside.params,
      {
        token: 't'.repeat(40),
        target: { type: 'group', id: 'g-9', botAccountId: 'bot-1' },
        message: { format: 'text', parts: [{ type: 'text', text: 'from a handler' }] },
        eventId: 'e7',
      },
    ]);
  });

  it('uploads bytes in chunks of at most the size the host names, in order, and replies with the media id', async () => {
    const host = await ready();
    const received: Buffer[] = [];
    host.answer = (req) => {
      const p = req.params as Record<string, any>;
      if (req.method === 'media.upload') return { result: { uploadId: 'upload-0123456789abcdef', maxChunkBytes: 256 * 1024 } };
      if (req.method === 'media.chunk') {
        received.push(Buffer.from(p['data'], 'base64'));
        return { result: { received: received.reduce((n, b) => n + b.length, 0) } };
      }
      if (req.method === 'media.finish') {
        return {
          result: { mediaId: 'media-0123456789abcdef', contentType: 'image/png', size: 600_000, expiresAt: '2026-01-01T01:00:00.000Z' },
        };
      }
      return { result: { accepted: true, target: { type: 'group', id: 'g' } } };
    };
    await host.request('events.message', messageEvent('e-up', '/upload 600000', { name: 'upload', args: '600000' }));
    await completionOf(host, 'e-up');
    const calls = host.messages.filter((m) => 'method' in m && String(m.method).startsWith('media.')) as JsonRpcRequest[];
    expect(calls.map((m) => [m.method, (m.params as any).offset])).toEqual([
      ['media.upload', undefined],
      ['media.chunk', 0],
      ['media.chunk', 262_144],
      ['media.chunk', 524_288],
      ['media.finish', undefined],
    ]);
    expect(calls[0]!.params).toEqual({ token: 't'.repeat(40), contentType: 'image/png', size: 600_000, fileName: 'big.png' });
    expect(Buffer.concat(received).length).toBe(600_000);
    expect(Buffer.concat(received).subarray(0, 4).toString('latin1')).toBe('\x89PNG');
    const reply = host.messages.find(isRequest('messages.reply')) as JsonRpcRequest;
    expect((reply.params as any).message.parts).toEqual([{ type: 'image', mediaId: 'media-0123456789abcdef', alt: 'uploaded' }]);
  });

  it("turns the host's refusal of an upload into a PluginMessageError with its code", async () => {
    const host = await ready();
    host.answer = (req) =>
      req.method === 'media.upload'
        ? { error: { code: RpcErrorCode.MessageRejected, message: 'too many', data: { code: 'message.media.rate_limited' } } }
        : { result: {} };
    await host.request('events.message', messageEvent('e-rl', '/upload', { name: 'upload', args: '' }));
    const refused = await logged(host, 'upload refused');
    expect((refused.params as { fields: unknown }).fields).toEqual({
      name: 'PluginMessageError',
      code: 'message.media.rate_limited',
      fromHost: true,
    });
  });

  it('reports a HandlerError in events.completed, after the accepting ACK', async () => {
    const host = await ready();
    const ack = await host.request('events.message', messageEvent('e1', '/fail', { name: 'fail', args: '' }));
    expect(ack.result).toEqual({ eventId: 'e1', accepted: true, intercepted: false, error: null });
    expect((await completionOf(host, 'e1')).params).toMatchObject({
      eventId: 'e1',
      error: { code: 'fixture.failed', message: 'asked to fail' },
    });
    expect(host.messages.filter(isRequest('events.completed'))).toHaveLength(1);
  });

  it('times out its own unanswered request after requestTimeoutMilliseconds', async () => {
    const host = await ready({ runtime: { requestTimeoutMilliseconds: 200 } });
    host.answer = (req) => (req.method === 'messages.reply' ? undefined : { result: { accepted: true } });
    const ack = await host.request('events.message', messageEvent('e1', '/wait', { name: 'wait', args: '' }));
    expect(ack.result).toMatchObject({ accepted: true });
    expect((await completionOf(host, 'e1')).params).toMatchObject({
      error: {
        code: 'plugin.handler_failed',
        message: expect.stringMatching(/messages.reply failed: no answer within 200 ms.*RequestTimeout/),
      },
    });
  });

  it('counts running handlers: beyond maxConcurrentEvents it answers Overloaded, and ping reports them while busy', async () => {
    const host = await ready({ runtime: { maxConcurrentEvents: 2, queueCapacity: 8 } });
    sendEvent(host, 'a', '/slow 400', { name: 'slow', args: '400' });
    sendEvent(host, 'b', '/slow 400', { name: 'slow', args: '400' });
    sendEvent(host, 'c', '/slow 10', { name: 'slow', args: '10' });
    expect((await ackOf(host, 'a')).result).toMatchObject({ accepted: true });
    expect((await ackOf(host, 'b')).result).toMatchObject({ accepted: true });
    // Both ACKed, both still running: the third finds no free handler and is not queued.
    expect((await ackOf(host, 'c')).error).toMatchObject({
      code: RpcErrorCode.Overloaded,
      data: { maxConcurrentEvents: 2, queueCapacity: 8 },
    });
    expect((await host.request('plugin.ping', { nonce: 'n1' })).result).toEqual({ nonce: 'n1', inFlightEvents: 2, queuedEvents: 0 });
    await completionOf(host, 'a');
    await completionOf(host, 'b');
    expect((await host.request('plugin.ping', {})).result).toEqual({ inFlightEvents: 0, queuedEvents: 0 });
    sendEvent(host, 'd', '/slow 10', { name: 'slow', args: '10' });
    expect((await ackOf(host, 'd')).result).toMatchObject({ accepted: true });
  });

  it('holds events back until onStart finished (at most maxConcurrentEvents + queueCapacity) and drops a waiting one on events.cancel', async () => {
    const host = await ready({ runtime: { maxConcurrentEvents: 1, queueCapacity: 1 }, settings: { startDelayMs: 400 } });
    sendEvent(host, 'a', '/echo a', { name: 'echo', args: 'a' });
    sendEvent(host, 'b', '/echo b', { name: 'echo', args: 'b' });
    sendEvent(host, 'c', '/echo c', { name: 'echo', args: 'c' });
    expect((await ackOf(host, 'c')).error).toMatchObject({ code: RpcErrorCode.Overloaded });
    expect((await host.request('plugin.ping', {})).result).toEqual({ inFlightEvents: 0, queuedEvents: 2 });
    expect((await host.request('events.cancel', { eventId: 'b', reason: 'ackTimeout' })).result).toEqual({ cancelled: true });
    expect((await ackOf(host, 'b')).error).toMatchObject({ code: RpcErrorCode.Cancelled });
    expect((await ackOf(host, 'a')).result).toMatchObject({ accepted: true });
    await completionOf(host, 'a');
    expect(
      host.messages
        .filter(isRequest('events.completed'))
        .map((m) => (m as JsonRpcRequest & { params: { eventId: string } }).params.eventId),
    ).toEqual(['a']);
  });

  it("aborts the handler's signal on events.cancel, answers cancelled true then false, and still reports the completion", async () => {
    const host = await ready();
    const ack = await host.request('events.message', messageEvent('x', '/cancellable', { name: 'cancellable', args: '' }));
    expect(ack.result).toMatchObject({ accepted: true });
    expect((await host.request('events.cancel', { eventId: 'x', reason: 'ackTimeout' })).result).toEqual({ cancelled: true });
    // The handler's logger names its event in log.write; onStart's logger (the 'started' line) names none.
    expect((await logged(host, 'aborted')).params).toMatchObject({
      eventId: 'x',
      fields: { code: 'SDK_EVENT_CANCELLED', message: expect.stringMatching(/Event x was cancelled.*ackTimeout/) },
    });
    expect((await completionOf(host, 'x')).params).toMatchObject({ eventId: 'x', error: null });
    expect((await host.request('events.cancel', { eventId: 'x', reason: 'deadline' })).result).toEqual({ cancelled: false });
    expect((await host.request('events.cancel', { eventId: 'never-sent', reason: 'deadline' })).result).toEqual({ cancelled: false });
    expect((await host.request('events.cancel', { eventId: '' })).error?.code).toBe(RpcErrorCode.InvalidParams);
  });

  it("aborts the handler's signal itself when runtime.handlerDeadlineMilliseconds passes", async () => {
    const host = await ready({ runtime: { handlerDeadlineMilliseconds: 200 } });
    const sent = Date.now();
    sendEvent(host, 'd', '/cancellable', { name: 'cancellable', args: '' });
    expect((await logged(host, 'aborted')).params).toMatchObject({
      fields: { code: 'SDK_EVENT_CANCELLED', message: expect.stringMatching(/deadline passed/) },
    });
    expect(Date.now() - sent).toBeGreaterThanOrEqual(190);
    expect((await completionOf(host, 'd')).params).toMatchObject({ eventId: 'd', error: null });
  });

  it('on plugin.stop answers at once, refuses new events, lets running handlers finish and report completion, runs onStop and exits 0', async () => {
    const host = await ready({ runtime: { maxConcurrentEvents: 2, queueCapacity: 4 } });
    sendEvent(host, 'busy', '/slow 300', { name: 'slow', args: '300' });
    expect((await ackOf(host, 'busy')).result).toMatchObject({ eventId: 'busy', accepted: true });
    const stop = await host.request('plugin.stop', { reason: 'operator' });
    expect(stop.result).toEqual({ accepted: true });
    expect((await host.request('events.message', messageEvent('late', 'hi'))).error?.code).toBe(RpcErrorCode.Stopping);
    expect(await host.exited).toEqual({ code: 0, signal: null });
    const methods = host.messages
      .filter((m): m is JsonRpcRequest => 'method' in m)
      .map((m) => (m.method === 'log.write' ? (m.params as { message: string }).message : m.method));
    expect(methods).toEqual(['started', 'messages.reply', 'events.completed', 'stopping']);
  });

  it('on plugin.stop refuses events still waiting for onStart with Stopping', async () => {
    const host = await ready({ settings: { startDelayMs: 300 } });
    sendEvent(host, 'queued', '/echo x', { name: 'echo', args: 'x' });
    expect((await host.request('plugin.stop', { reason: 'operator' })).result).toEqual({ accepted: true });
    expect((await ackOf(host, 'queued')).error?.code).toBe(RpcErrorCode.Stopping);
    expect((await host.exited).code).toBe(0);
  });

  it('exits promptly when stdin closes, settling its pending requests', async () => {
    const host = await ready();
    host.answer = (req) => (req.method === 'messages.reply' ? undefined : { result: { accepted: true } });
    host.write({ jsonrpc: '2.0', id: 'w', method: 'events.message', params: messageEvent('w', '/wait', { name: 'wait', args: '' }) });
    await host.waitFor(isRequest('messages.reply'));
    host.child.stdin.end();
    expect(await host.exited).toEqual({ code: 0, signal: null });
  });

  it('exits 1 on a framing error from the host', async () => {
    const host = await ready();
    host.writeRaw('this is not a frame\r\n');
    expect((await host.exited).code).toBe(1);
    expect(host.stderr).toMatch(/framing\.header\.malformed/);
  });

  describe('a plugin that intercepts', () => {
    const interceptor = async () => {
      const host = start(CJS, ['--intercepts', '--host-stdio']);
      expect((await host.request('host.initialize', host.initParams())).error).toBeUndefined();
      return host;
    };

    it('ACKs intercepted: true on ctx.intercept(), before the handler ends', async () => {
      const host = await interceptor();
      const sent = Date.now();
      const ack = await host.request('events.message', messageEvent('i', '/intercept 400', { name: 'intercept', args: '400' }));
      expect(Date.now() - sent).toBeLessThan(300);
      expect(ack.result).toEqual({ eventId: 'i', accepted: true, intercepted: true, error: null });
      expect(host.messages.some(isRequest('events.completed'))).toBe(false);
      expect((await completionOf(host, 'i')).params).toMatchObject({ eventId: 'i', error: null });
    });

    it('ACKs intercepted: false on ctx.pass(), before the handler ends', async () => {
      const host = await interceptor();
      const ack = await host.request('events.message', messageEvent('p', '/pass 400', { name: 'pass', args: '400' }));
      expect(ack.result).toEqual({ eventId: 'p', accepted: true, intercepted: false, error: null });
      expect(host.messages.some(isRequest('events.completed'))).toBe(false);
      await completionOf(host, 'p');
    });

    it('ACKs when a handler returns without deciding (after its replies), then completes', async () => {
      const host = await interceptor();
      const ack = await host.request('events.message', messageEvent('r', '/echo hi', { name: 'echo', args: 'hi' }));
      expect(ack.result).toEqual({ eventId: 'r', accepted: true, intercepted: false, error: null });
      await completionOf(host, 'r');
      expect(trace(host, [String(ack.id)]).filter((m) => m !== 'log.write')).toEqual([
        'messages.reply',
        `ack:${String(ack.id)}`,
        'events.completed',
      ]);
    });

    it('declines with the error when a handler throws before deciding; no completion follows', async () => {
      const host = await interceptor();
      const ack = await host.request('events.message', messageEvent('f', '/fail', { name: 'fail', args: '' }));
      expect(ack.result).toEqual({
        eventId: 'f',
        accepted: false,
        intercepted: false,
        error: { code: 'fixture.failed', message: 'asked to fail' },
      });
      expect((await host.request('plugin.ping', {})).result).toEqual({ inFlightEvents: 0, queuedEvents: 0 });
      expect(host.messages.some(isRequest('events.completed'))).toBe(false);
    });

    it('refuses the handshake when a plugin defined with an HTTP manifest intercepts without messages.intercept', async () => {
      const plugin = definePlugin({
        manifest: { pluginId: 'com.example.fixture', name: 'Web', version: '1.0.0', author: 'A', protocolVersion: 2 },
        intercepts: true,
        onMessage: () => undefined,
      });
      const stdin = new PassThrough();
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      const frames: JsonRpcResponse[] = [];
      const decoder = new FrameDecoder();
      stdout.on('data', (chunk: Buffer) =>
        decoder.push(chunk).forEach((e) => e.kind === 'message' && frames.push(e.message as JsonRpcResponse)),
      );
      const done = runStdio(plugin, { argv: ['node', 'plugin', '--host-stdio'], stdin, stdout, stderr, exit: () => undefined });
      stdin.write(encodeFrame({ jsonrpc: '2.0', id: 1, method: 'host.initialize', params: initParams() }));
      expect(await done).toBe(1);
      expect(frames[0]?.error).toMatchObject({
        code: RpcErrorCode.PluginError,
        message: expect.stringMatching(/SDK_INTERCEPT_PERMISSION_MISSING/),
      });
    });

    it('does not start when the manifest lacks messages.intercept', async () => {
      const host = start(CJS, ['--intercepts-undeclared', '--host-stdio']);
      expect((await host.exited).code).toBe(1);
      expect(host.stderr).toMatch(/SDK_INTERCEPT_PERMISSION_MISSING[\s\S]*messages\.intercept/);
    });
  });

  describe('settings.changed', () => {
    async function run(plugin: ReturnType<typeof definePlugin>) {
      const stdin = new PassThrough();
      const stdout = new PassThrough();
      const frames: JsonRpcResponse[] = [];
      const decoder = new FrameDecoder();
      stdout.on('data', (chunk: Buffer) =>
        decoder.push(chunk).forEach((e) => e.kind === 'message' && !('method' in e.message) && frames.push(e.message as JsonRpcResponse)),
      );
      void runStdio(plugin, { argv: ['node', 'plugin', '--host-stdio'], stdin, stdout, stderr: new PassThrough(), exit: () => undefined });
      const request = async (id: number, method: string, params: unknown) => {
        stdin.write(encodeFrame({ jsonrpc: '2.0', id, method, params }));
        for (let i = 0; i < 200 && !frames.some((f) => f.id === id); i++) await new Promise((r) => setTimeout(r, 5));
        return frames.find((f) => f.id === id) as JsonRpcResponse;
      };
      expect((await request(1, 'host.initialize', initParams({ settings: { greeting: 'hi' } }))).error).toBeUndefined();
      return { request, stop: () => stdin.end() };
    }

    it('replaces ctx.settings of the running plugin after onSettingsChanged, and answers applied', async () => {
      const seen: unknown[] = [];
      let lifecycle: { settings: Readonly<Record<string, unknown>> } | undefined;
      const plugin = definePlugin({
        pluginId: 'com.example.fixture',
        onStart: (ctx) => void (lifecycle = ctx),
        onSettingsChanged: (ctx, previous) => void seen.push({ now: ctx.settings, previous }),
        onMessage: () => undefined,
      });
      const { request, stop } = await run(plugin);
      expect(lifecycle?.settings).toEqual({ greeting: 'hi' });
      expect((await request(2, 'settings.changed', { settings: { greeting: 'hello' } })).result).toEqual({ applied: true });
      expect(seen).toEqual([{ now: { greeting: 'hello' }, previous: { greeting: 'hi' } }]);
      expect(lifecycle?.settings).toEqual({ greeting: 'hello' });
      expect((await request(3, 'settings.changed', {})).error?.code).toBe(RpcErrorCode.InvalidParams);
      stop();
    });

    it('keeps the previous values and answers PluginError when onSettingsChanged throws', async () => {
      let lifecycle: { settings: Readonly<Record<string, unknown>> } | undefined;
      const plugin = definePlugin({
        pluginId: 'com.example.fixture',
        onStart: (ctx) => void (lifecycle = ctx),
        onSettingsChanged: (ctx) => {
          if (ctx.settings['greeting'] === '') throw new Error('greeting must not be empty');
        },
        onMessage: () => undefined,
      });
      const { request, stop } = await run(plugin);
      const answer = await request(2, 'settings.changed', { settings: { greeting: '' } });
      // The thrown error's message alone: the operator reads it as the refusal; the stack stays in the plugin's log.
      expect(answer.error).toMatchObject({ code: RpcErrorCode.PluginError, message: 'greeting must not be empty' });
      expect(lifecycle?.settings).toEqual({ greeting: 'hi' });
      stop();
    });
  });

  it('runs the ES module build the same way', async () => {
    const host = await ready({ pluginId: 'com.example.esm' }, ESM);
    const ack = await host.request('events.message', messageEvent('e1', 'ping'));
    expect(ack.result).toMatchObject({ accepted: true });
    await completionOf(host, 'e1');
    expect((host.messages.find(isRequest('messages.reply')) as JsonRpcRequest).params).toMatchObject({
      message: { format: 'text', parts: [{ type: 'text', text: 'esm: ping' }] },
    });
    expect(host.stderr).toMatch(/esm module loaded/);
    expect(host.received.every((e) => e.kind === 'message')).toBe(true);
  });
});
