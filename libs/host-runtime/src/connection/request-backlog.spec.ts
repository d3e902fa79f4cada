import { PassThrough, Writable } from 'node:stream';
import { encodeFrame, FrameDecoder, LIMITS, type JsonRpcMessage } from '@host/protocol';
import { createMessageConnection, type Message, type MessageConnection } from 'vscode-jsonrpc/node';
import { FramedMessageReader } from './framed-reader';
import { FramedMessageWriter, MAX_HELD_TURNS } from './framed-writer';
import { RequestBacklog } from './request-backlog';

/** A real stream to the plugin that keeps each system-level write (one write or writev) apart. */
class WriteLog extends Writable {
  readonly writes: JsonRpcMessage[][] = [];
  private readonly decoder = new FrameDecoder();

  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.take([chunk]);
    done();
  }

  override _writev(chunks: { chunk: Buffer }[], done: () => void): void {
    this.take(chunks.map((c) => c.chunk));
    done();
  }

  private take(chunks: Buffer[]): void {
    const frames = chunks.flatMap((c) => this.decoder.push(c));
    this.writes.push(frames.map((f) => (f.kind === 'message' ? f.message : ({ error: f.code } as never))));
  }

  get frames(): JsonRpcMessage[] {
    return this.writes.flat();
  }
}

const request = (id: number, method = 'log.write') => encodeFrame({ jsonrpc: '2.0', id, method, params: { n: id } });
const turn = () => new Promise((r) => setImmediate(r));

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await turn();
  expect(check()).toBe(true);
}

function host(maxParallelism = 64) {
  const toHost = new PassThrough();
  const toPlugin = new WriteLog();
  const backlog = new RequestBacklog();
  const connection = createMessageConnection(
    new FramedMessageReader(toHost, () => undefined, LIMITS, backlog),
    new FramedMessageWriter(toPlugin, backlog),
    undefined,
    { maxParallelism, messageStrategy: backlog.strategy },
  );
  return { toHost, toPlugin, backlog, connection };
}

describe('answering bursts of plugin requests', () => {
  const open: MessageConnection[] = [];
  afterEach(() => open.splice(0).forEach((c) => c.dispose()));

  it('answers requests that arrived together in one write', async () => {
    const { toHost, toPlugin, backlog, connection } = host();
    open.push(connection);
    connection.onRequest((_method, params) => ({ n: (params as { n: number }).n }));
    connection.listen();
    const burst = MAX_HELD_TURNS;
    toHost.write(Buffer.concat(Array.from({ length: burst }, (_, i) => request(i + 1))));
    await until(() => toPlugin.frames.length === burst);
    expect(toPlugin.writes).toHaveLength(1);
    expect(toPlugin.frames.map((f) => (f as { result: { n: number } }).result.n)).toEqual(Array.from({ length: burst }, (_, i) => i + 1));
    expect(backlog.pending).toBe(0);
  });

  it('writes at once when no request is waiting', async () => {
    const { toPlugin, connection } = host();
    open.push(connection);
    connection.listen();
    connection.sendRequest('plugin.ping', { nonce: 'a' }).catch(() => undefined);
    await turn();
    expect(toPlugin.frames).toEqual([expect.objectContaining({ method: 'plugin.ping', params: { nonce: 'a' } })]);
  });

  it('does not hold frames while the waiting requests cannot start', async () => {
    // One request at a time: the first one's handler blocks, so the second waits in the connection.
    const { toHost, toPlugin, backlog, connection } = host(1);
    open.push(connection);
    let release!: () => void;
    const blocked = new Promise<void>((r) => (release = r));
    connection.onRequest(async () => {
      await blocked;
      return { ok: true };
    });
    connection.listen();
    toHost.write(Buffer.concat([request(1), request(2)]));
    await until(() => backlog.starts === 1);
    connection.sendRequest('plugin.ping', { nonce: 'b' }).catch(() => undefined);
    await until(() => toPlugin.frames.length === 1);
    expect(backlog.pending).toBe(1);
    expect(toPlugin.frames[0]).toEqual(expect.objectContaining({ method: 'plugin.ping' }));
    release();
    await until(() => toPlugin.frames.length === 3);
  });

  it('does not hold answers for a whole long backlog', async () => {
    const { toHost, toPlugin, connection } = host();
    open.push(connection);
    connection.onRequest(() => ({ ok: true }));
    connection.listen();
    toHost.write(Buffer.concat(Array.from({ length: 100 }, (_, i) => request(i + 1))));
    await until(() => toPlugin.frames.length === 100);
    // One answer per turn, held for at most MAX_HELD_TURNS turns after the first.
    expect(toPlugin.writes.length).toBeGreaterThanOrEqual(Math.ceil(100 / (MAX_HELD_TURNS + 1)));
    expect(toPlugin.writes[0]!.length).toBeLessThanOrEqual(MAX_HELD_TURNS + 1);
  });
});

describe('bounds on what the host buffers for a plugin', () => {
  const open: MessageConnection[] = [];
  afterEach(() => open.splice(0).forEach((c) => c.dispose()));

  it('stops reading while too many messages wait, and reads again once they are handled', async () => {
    const toHost = new PassThrough();
    const toPlugin = new WriteLog();
    const backlog = new RequestBacklog({ highWaterMark: 10, lowWaterMark: 2 });
    const connection = createMessageConnection(
      new FramedMessageReader(toHost, () => undefined, LIMITS, backlog),
      new FramedMessageWriter(toPlugin, backlog),
      undefined,
      {
        maxParallelism: 64,
        messageStrategy: backlog.strategy,
      },
    );
    open.push(connection);
    let most = 0;
    connection.onRequest((_method, params) => {
      most = Math.max(most, backlog.queued);
      return { n: (params as { n: number }).n };
    });
    connection.listen();
    // One frame per chunk, as a pipe may deliver them; notifications count too.
    for (let i = 1; i <= 200; i++) toHost.write(i % 4 === 0 ? encodeFrame({ jsonrpc: '2.0', method: 'note', params: {} }) : request(i));
    await turn();
    expect(toHost.isPaused()).toBe(true);
    await until(() => toPlugin.frames.length === 150);
    expect(most).toBeLessThanOrEqual(10);
    await until(() => backlog.queued === 0);
    expect(toHost.isPaused()).toBe(false);
  });

  it('counts a reused request id once', () => {
    const backlog = new RequestBacklog({ highWaterMark: 2, lowWaterMark: 0 });
    backlog.received({ jsonrpc: '2.0', id: 1, method: 'log.write' } as never);
    backlog.received({ jsonrpc: '2.0', id: 1, method: 'log.write' } as never);
    expect(backlog.queued).toBe(1);
    expect(backlog.full).toBe(false);
  });

  it('reports a plugin that does not read its stdin once, keeps the stream bounded, and refuses later frames', async () => {
    // A stdin nobody reads: the first write never completes.
    const stuck = new Writable({ write: () => undefined });
    const overflows: number[] = [];
    const writer = new FramedMessageWriter(stuck, undefined, { maxUnreadBytes: 3 * 1024 * 1024, onOverflow: (n) => overflows.push(n) });
    const message = { jsonrpc: '2.0' as const, id: 1, result: { accepted: true, pad: 'x'.repeat(100) } };
    let refused = 0;
    for (let i = 0; i < 40_000; i++) await writer.write({ ...message, id: i } as Message).catch(() => refused++);
    await turn();
    expect(overflows).toHaveLength(1);
    expect(overflows[0]).toBeGreaterThan(3 * 1024 * 1024);
    expect(refused).toBeGreaterThan(0);
    // Past the first MiB the frames wait in the writer, joined into large chunks, not one stream record each.
    expect(stuck.writableLength).toBeLessThan(1.1 * 1024 * 1024);
    expect(writer.unreadBytes).toBeLessThanOrEqual(3 * 1024 * 1024 + 200);
  });
});
