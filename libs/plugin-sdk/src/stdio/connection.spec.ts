import { PassThrough } from 'node:stream';
import { FrameDecoder, LIMITS, RpcErrorCode, encodeFrame, type JsonRpcMessage } from '@host/protocol';
import { HostCallError, PluginSdkError } from '../errors';
import { RpcConnection } from './connection';

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
    input.write(
      encodeFrame({
        jsonrpc: '2.0',
        id: 1,
        error: { code: RpcErrorCode.PermissionDenied, message: 'no', data: { permission: 'messages.send' } },
      }),
    );
    await expect(refused).rejects.toMatchObject({
      name: 'HostCallError',
      code: RpcErrorCode.PermissionDenied,
      data: { permission: 'messages.send' },
    });
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
