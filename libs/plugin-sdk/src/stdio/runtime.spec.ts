import { RpcErrorCode, type JsonRpcRequest, type JsonRpcResponse } from '@host/protocol';
import { join } from 'node:path';
import { StdioHost, messageEvent } from '../__fixtures__/stdio-host';

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

describe('stdio runtime in a real process', () => {
  it('without --host-stdio prints help to stderr and exits 2 (stdout keeps only the program\'s own prints)', async () => {
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
      sdkVersion: '2.0.0',
      capabilities: ['events.message', 'plugin.stop', 'plugin.ping'],
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
    expect(res.error).toMatchObject({ code: RpcErrorCode.PluginError, message: expect.stringMatching(/is for plugin "com.example.other"/) });
    expect((await host.exited).code).toBe(1);
  });

  it('sends the reply before the ACK, and keeps every print off stdout', async () => {
    const host = await ready();
    const ack = await host.request('events.message', messageEvent('e1', '/echo <hi>', { name: 'echo', args: '<hi>' }));
    expect(ack.result).toEqual({ eventId: 'e1', accepted: true, intercepted: false, error: null });
    const order = host.messages.filter((m) => ('method' in m ? m.method === 'messages.reply' : m.id === ack.id));
    expect(order.map((m) => ('method' in m ? m.method : 'ack'))).toEqual(['messages.reply', 'ack']);
    expect((order[0] as JsonRpcRequest).params).toEqual({
      token: 't'.repeat(40),
      eventId: 'e1',
      message: { format: 'markdown', parts: [{ type: 'mention', target: 'user', id: 'user-1', displayName: 'Ann' }, { type: 'text', text: ' said <hi>' }] },
    });
    // Every byte on stdout decoded as a frame; the prints went to stderr.
    expect(host.received.every((e) => e.kind === 'message')).toBe(true);
    expect(host.stderr).toMatch(/module loaded[\s\S]*raw stdout write[\s\S]*onStart ran[\s\S]*handler console.log/);
  });

  it('turns a host refusal into a PluginMessageError the handler can catch', async () => {
    const host = await ready();
    host.answer = (req) =>
      req.method === 'messages.reply'
        ? { error: { code: RpcErrorCode.MessageRejected, message: 'reply window closed', data: { code: 'message.reference.expired' } } }
        : { result: { accepted: true } };
    await host.request('events.message', messageEvent('e1', '/catch', { name: 'catch', args: '' }));
    const caught = (await host.waitFor((m) => isRequest('log.write')(m) && (m as JsonRpcRequest & { params: { message: string } }).params.message === 'caught')) as JsonRpcRequest;
    expect((caught.params as { fields: unknown }).fields).toEqual({ name: 'PluginMessageError', code: 'message.reference.expired', fromHost: true });
  });

  it('reports a HandlerError in the ACK', async () => {
    const host = await ready();
    const ack = await host.request('events.message', messageEvent('e1', '/fail', { name: 'fail', args: '' }));
    expect(ack.result).toEqual({ eventId: 'e1', accepted: false, intercepted: false, error: { code: 'fixture.failed', message: 'asked to fail' } });
  });

  it('times out its own unanswered request after requestTimeoutMilliseconds', async () => {
    const host = await ready({ runtime: { requestTimeoutMilliseconds: 200 } });
    host.answer = (req) => (req.method === 'messages.reply' ? undefined : { result: { accepted: true } });
    const ack = await host.request('events.message', messageEvent('e1', '/wait', { name: 'wait', args: '' }));
    expect(ack.result).toMatchObject({ accepted: false, error: { code: 'plugin.handler_failed', message: expect.stringMatching(/messages.reply failed: no answer within 200 ms.*RequestTimeout/) } });
  });

  it('honours maxConcurrentEvents and queueCapacity, and answers ping while busy', async () => {
    const host = await ready({ runtime: { maxConcurrentEvents: 1, queueCapacity: 1 } });
    host.write({ jsonrpc: '2.0', id: 'a', method: 'events.message', params: messageEvent('a', '/slow 400', { name: 'slow', args: '400' }) });
    host.write({ jsonrpc: '2.0', id: 'b', method: 'events.message', params: messageEvent('b', '/slow 10', { name: 'slow', args: '10' }) });
    host.write({ jsonrpc: '2.0', id: 'c', method: 'events.message', params: messageEvent('c', '/slow 10', { name: 'slow', args: '10' }) });
    expect((await ackOf(host, 'c')).error).toMatchObject({ code: RpcErrorCode.Overloaded, data: { maxConcurrentEvents: 1, queueCapacity: 1 } });
    expect((await host.request('plugin.ping', { nonce: 'n1' })).result).toEqual({ nonce: 'n1', inFlightEvents: 1, queuedEvents: 1 });
    expect((await ackOf(host, 'a')).result).toMatchObject({ accepted: true });
    expect((await ackOf(host, 'b')).result).toMatchObject({ accepted: true });
    const acks = host.messages.filter((m) => !('method' in m) && (m.id === 'a' || m.id === 'b')).map((m) => (m as JsonRpcResponse).id);
    expect(acks).toEqual(['a', 'b']);
  });

  it('on plugin.stop answers at once, lets in-flight events finish, runs onStop and exits 0', async () => {
    const host = await ready({ runtime: { maxConcurrentEvents: 1, queueCapacity: 4 } });
    host.write({ jsonrpc: '2.0', id: 'busy', method: 'events.message', params: messageEvent('busy', '/slow 300', { name: 'slow', args: '300' }) });
    host.write({ jsonrpc: '2.0', id: 'queued', method: 'events.message', params: messageEvent('queued', '/echo x', { name: 'echo', args: 'x' }) });
    const stop = await host.request('plugin.stop', { reason: 'operator' });
    expect(stop.result).toEqual({ accepted: true });
    expect((await host.request('events.message', messageEvent('late', 'hi'))).error?.code).toBe(RpcErrorCode.Stopping);
    expect((await ackOf(host, 'queued')).error?.code).toBe(RpcErrorCode.Stopping);
    expect((await ackOf(host, 'busy')).result).toMatchObject({ eventId: 'busy', accepted: true });
    expect(await host.exited).toEqual({ code: 0, signal: null });
    const methods = host.messages
      .filter((m): m is JsonRpcRequest => 'method' in m)
      .map((m) => (m.method === 'log.write' ? (m.params as { message: string }).message : m.method));
    expect(methods).toEqual(['started', 'messages.reply', 'stopping']);
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

  it('runs the ES module build the same way', async () => {
    const host = await ready({ pluginId: 'com.example.esm' }, ESM);
    const ack = await host.request('events.message', messageEvent('e1', 'ping'));
    expect(ack.result).toMatchObject({ accepted: true });
    expect((host.messages.find(isRequest('messages.reply')) as JsonRpcRequest).params).toMatchObject({ message: { format: 'text', parts: [{ type: 'text', text: 'esm: ping' }] } });
    expect(host.stderr).toMatch(/esm module loaded/);
    expect(host.received.every((e) => e.kind === 'message')).toBe(true);
  });
});
