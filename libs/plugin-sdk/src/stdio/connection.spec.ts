import { PassThrough } from 'node:stream';
import { FrameDecoder, LIMITS, RpcErrorCode, encodeFrame, type JsonRpcMessage } from '@host/protocol';
import { HostCallError, PluginSdkError } from '../errors';
import { RpcConnection } from './connection';
import { EventScheduler } from './scheduler';

function pair(maxPayloadBytes = 4096) {
  const input = new PassThrough();
  const written: JsonRpcMessage[] = [];
  const decoder = new FrameDecoder();
  const closed: unknown[] = [];
  const conn = new RpcConnection(
    input,
    (chunk, done) => {
      for (const e of decoder.push(chunk)) if (e.kind === 'message') written.push(e.message);
      setImmediate(() => done());
    },
    { maxHeaderBytes: LIMITS.maxHeaderBytes, maxPayloadBytes },
    { onRequest: () => undefined, onClose: (e) => void closed.push(e) },
  );
  return { input, conn, written, closed };
}

describe('RpcConnection', () => {
  it('settles a request with the answer and ignores late or unknown answers', async () => {
    const { input, conn, written } = pair();
    const pending = conn.request('log.write', { a: 1 }, 1000);
    expect(written).toEqual([{ jsonrpc: '2.0', id: 1, method: 'log.write', params: { a: 1 } }]);
    input.write(encodeFrame({ jsonrpc: '2.0', id: 99, result: 'stray' }));
    input.write(encodeFrame({ jsonrpc: '2.0', id: 1, result: { accepted: true } }));
    await expect(pending).resolves.toEqual({ accepted: true });
  });

  it('rejects with HostCallError on an error answer and on timeout', async () => {
    const { input, conn } = pair();
    const refused = conn.request('messages.send', {}, 1000);
    input.write(encodeFrame({ jsonrpc: '2.0', id: 1, error: { code: RpcErrorCode.PermissionDenied, message: 'no', data: { permission: 'messages.send' } } }));
    await expect(refused).rejects.toMatchObject({ name: 'HostCallError', code: RpcErrorCode.PermissionDenied, data: { permission: 'messages.send' } });
    await expect(conn.request('log.write', {}, 20)).rejects.toThrow(HostCallError);
  });

  it('fails every pending request when the stream ends, and refuses new ones', async () => {
    const { input, conn, closed } = pair();
    const a = conn.request('messages.reply', {}, 10_000);
    const b = conn.request('log.write', {}, 10_000);
    input.end();
    await expect(a).rejects.toMatchObject({ code: 'SDK_HOST_DISCONNECTED' });
    await expect(b).rejects.toBeInstanceOf(PluginSdkError);
    await expect(conn.request('log.write', {}, 10)).rejects.toMatchObject({ code: 'SDK_HOST_DISCONNECTED' });
    expect(closed).toEqual([undefined]);
  });

  it('reports a framing error as the close reason', () => {
    const { input, closed } = pair();
    input.write('garbage\r\n');
    expect(closed).toEqual([{ code: 'framing.header.malformed', message: expect.any(String) }]);
  });

  it('refuses to write a frame over the payload limit', async () => {
    const { conn } = pair(64);
    await expect(conn.request('log.write', { text: 'x'.repeat(100) }, 100)).rejects.toThrow(/larger than 64 bytes/);
  });

  it('flush() resolves once every written frame was handed on', async () => {
    const { conn } = pair();
    conn.respond(1, 'a');
    conn.respond(2, 'b');
    let flushed = false;
    const f = conn.flush().then(() => (flushed = true));
    expect(flushed).toBe(false);
    await f;
    expect(flushed).toBe(true);
  });
});

describe('EventScheduler', () => {
  it('holds events until resumed, runs at most maxConcurrent, queues up to capacity, refuses beyond', async () => {
    const s = new EventScheduler(1, 1);
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const task = (name: string, wait?: Promise<void>) => async () => {
      order.push(`start ${name}`);
      await wait;
      order.push(`end ${name}`);
    };
    expect(s.submit(task('a', gate), () => order.push('refused a'))).toBe('queued');
    s.resume();
    expect(s.submit(task('b'), () => order.push('refused b'))).toBe('queued');
    expect(s.submit(task('c'), () => order.push('refused c'))).toBe('refused');
    expect([s.inFlight, s.queued]).toEqual([1, 1]);
    release();
    await new Promise((r) => setImmediate(r));
    await s.idle();
    expect(order).toEqual(['start a', 'end a', 'start b', 'end b']);
  });

  it('drops queued tasks on stop', () => {
    const s = new EventScheduler(1, 4);
    const refused: string[] = [];
    s.submit(async () => undefined, () => refused.push('x'));
    s.dropQueued();
    expect([refused, s.queued]).toEqual([['x'], 0]);
  });
});
