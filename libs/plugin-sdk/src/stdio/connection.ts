import {
  FrameDecoder,
  RpcErrorCode,
  encodeFrame,
  type FrameLimits,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '@host/protocol';
import { HostCallError, PluginSdkError } from '../errors';

/** Writes one chunk; calls back when it was handed to the OS. */
export type ChunkWriter = (chunk: Uint8Array, done: (error?: Error | null) => void) => unknown;

export interface IncomingRequest {
  readonly id: string | number;
  readonly method: string;
  readonly params: unknown;
}

export interface ConnectionEvents {
  onRequest(request: IncomingRequest): void;
  /** Every decoded message, before it is routed (for tracing). */
  onMessage?(message: JsonRpcMessage): void;
  /** The stream ended or broke; `error` is set for a framing error or an end inside a frame. */
  onClose(error?: { code: string; message: string }): void;
}

interface Pending {
  method: string;
  resolve(value: unknown): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * A JSON-RPC 2.0 peer over a byte stream pair, framed with the protocol's
 * strict FrameDecoder/encodeFrame. Both sides send requests at any time.
 *
 * Writes are serialised: each frame is one write call, issued in call order,
 * so frames never interleave; `flush()` resolves once everything written so
 * far reached the OS. Every outgoing request settles: with the answer, with a
 * RequestTimeout error after its timeout, or with SDK_HOST_DISCONNECTED when
 * the stream closes.
 */
export class RpcConnection {
  private readonly decoder: FrameDecoder;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private unflushed = 0;
  private flushWaiters: Array<() => void> = [];
  private closed = false;

  constructor(
    private readonly input: NodeJS.ReadableStream,
    private readonly writeChunk: ChunkWriter,
    private readonly limits: FrameLimits,
    private readonly events: ConnectionEvents,
  ) {
    this.decoder = new FrameDecoder(limits);
    input.on('data', (chunk: Buffer | string) => this.receive(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
    input.on('end', () => this.finish(this.decoder.end()[0]));
    input.on('close', () => this.finish());
    input.on('error', (error: Error) =>
      this.finish({ kind: 'error', code: 'framing.eof_in_frame', message: `stdin failed: ${error.message}` }),
    );
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Sends a request and resolves with its result. */
  request(method: string, params: unknown, timeoutMs: number): Promise<unknown> {
    if (this.closed)
      return Promise.reject(new PluginSdkError('SDK_HOST_DISCONNECTED', `${method} was not sent: the host connection is closed.`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new HostCallError(method, RpcErrorCode.RequestTimeout, `no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref?.();
      this.pending.set(id, { method, resolve, reject, timer });
      try {
        this.write({ jsonrpc: '2.0', id, method, params });
      } catch (error) {
        clearTimeout(timer);
        this.pending.delete(id);
        reject(error as Error);
      }
    });
  }

  respond(id: string | number, result: unknown): void {
    this.write({ jsonrpc: '2.0', id, result });
  }

  respondError(id: string | number | null, code: number, message: string, data?: unknown): void {
    this.write({ jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } });
  }

  /** Resolves when every frame written so far was handed to the OS. */
  flush(): Promise<void> {
    if (this.unflushed === 0) return Promise.resolve();
    return new Promise((resolve) => this.flushWaiters.push(resolve));
  }

  private write(message: JsonRpcMessage): void {
    const frame = encodeFrame(message);
    // The header is "Content-Length: N\r\n\r\n"; N is the payload size.
    const payload = Number(
      Buffer.from(frame.buffer, frame.byteOffset, frame.indexOf(13)).toString('latin1').slice('Content-Length: '.length),
    );
    if (payload > this.limits.maxPayloadBytes) {
      throw new HostCallError(
        'method' in message ? message.method : 'response',
        RpcErrorCode.InvalidRequest,
        `the frame payload would be larger than ${this.limits.maxPayloadBytes} bytes; send less data`,
      );
    }
    this.unflushed++;
    this.writeChunk(frame, () => {
      this.unflushed--;
      if (this.unflushed === 0) for (const w of this.flushWaiters.splice(0)) w();
    });
  }

  private receive(chunk: Uint8Array): void {
    for (const event of this.decoder.push(chunk)) {
      if (event.kind === 'error') {
        this.finish(event);
        return;
      }
      const message = event.message;
      this.events.onMessage?.(message);
      if ('method' in message) this.dispatchRequest(message);
      else this.settle(message);
    }
  }

  private dispatchRequest(message: JsonRpcRequest): void {
    // Notifications (no id) are not used by protocol v2 in this direction; ignore them.
    if (message.id === undefined) return;
    this.events.onRequest({ id: message.id, method: message.method, params: message.params });
  }

  private settle(message: JsonRpcResponse): void {
    const entry = typeof message.id === 'number' ? this.pending.get(message.id) : undefined;
    if (!entry) return; // late answer to a request that already timed out
    this.pending.delete(message.id as number);
    clearTimeout(entry.timer);
    if (message.error) entry.reject(new HostCallError(entry.method, message.error.code, message.error.message, message.error.data));
    else entry.resolve(message.result);
  }

  private finish(error?: { kind: 'error'; code: string; message: string } | { kind: 'message' }): void {
    if (this.closed) return;
    this.closed = true;
    for (const [id, entry] of this.pending) {
      clearTimeout(entry.timer);
      entry.reject(new PluginSdkError('SDK_HOST_DISCONNECTED', `${entry.method} got no answer: the host connection closed.`));
      this.pending.delete(id);
    }
    this.events.onClose(error && error.kind === 'error' ? { code: error.code, message: error.message } : undefined);
  }
}
