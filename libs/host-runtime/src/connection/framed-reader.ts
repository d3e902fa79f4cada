import type { Readable } from 'node:stream';
import { FrameDecoder, LIMITS, type FrameLimits, type FramingErrorCode } from '@host/protocol';
import { AbstractMessageReader, type DataCallback, type Disposable, type Message } from 'vscode-jsonrpc/node';
import type { RequestBacklog } from './request-backlog';

/** Details of the first bytes on stdout that were not a valid frame. */
export interface FramingFailure {
  code: FramingErrorCode;
  message: string;
  /** The chunk the error was found in, truncated, as JSON-escaped text. */
  bytes: string;
}

const SHOWN_BYTES = 120;

/**
 * A vscode-jsonrpc reader over the protocol's strict FrameDecoder. vscode's own
 * reader tolerates stray output until a header parses; this one reports the
 * first line that is not a frame (stdout pollution) through `onFailure` and
 * then ignores the stream, which cannot be resynchronised.
 *
 * With a `backlog`, it stops reading while too many of the plugin's messages
 * wait to be handled (RequestBacklog.full): the pipe fills, the plugin's
 * writes block, and the host holds at most the backlog's high mark plus one
 * chunk, however fast the plugin writes.
 */
export class FramedMessageReader extends AbstractMessageReader {
  private readonly decoder: FrameDecoder;
  private callback: DataCallback | null = null;
  private failure: FramingFailure | null = null;
  private paused = false;
  private halted = false;

  constructor(
    private readonly readable: Readable,
    private readonly onFailure: (failure: FramingFailure) => void,
    limits: FrameLimits = LIMITS,
    private readonly backlog?: RequestBacklog,
  ) {
    super();
    this.decoder = new FrameDecoder(limits);
  }

  get failed(): FramingFailure | null {
    return this.failure;
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    const onData = (chunk: Buffer) => this.onData(chunk);
    const onEnd = () => {
      for (const ev of this.decoder.end()) if (ev.kind === 'error') this.fail(ev.code, ev.message, new Uint8Array());
      this.fireClose();
    };
    const onError = (e: Error) => this.fireError(e);
    this.readable.on('data', onData);
    this.readable.on('end', onEnd);
    this.readable.on('error', onError);
    return {
      dispose: () => {
        this.callback = null;
        this.backlog?.cancelDrainWait();
        this.readable.off('data', onData);
        this.readable.off('end', onEnd);
        this.readable.off('error', onError);
      },
    };
  }

  private onData(chunk: Buffer): void {
    for (const ev of this.decoder.push(chunk)) {
      if (ev.kind === 'message') {
        if (!this.callback) continue;
        this.backlog?.received(ev.message as Message);
        this.callback(ev.message as Message);
      } else this.fail(ev.code, ev.message, chunk);
    }
    if (this.backlog?.full && !this.paused && !this.halted && this.callback) {
      this.paused = true;
      this.readable.pause();
      this.backlog.whenDrained(() => {
        this.paused = false;
        if (this.callback && !this.halted) this.readable.resume();
      });
    }
  }

  /** Stops reading stdout for good (the plugin is being stopped as misbehaving). */
  halt(): void {
    this.halted = true;
    this.backlog?.cancelDrainWait();
    this.readable.pause();
  }

  /** True while stdout is not read because the plugin's messages pile up. */
  get isPaused(): boolean {
    return this.paused;
  }

  private fail(code: FramingErrorCode, message: string, chunk: Uint8Array): void {
    if (this.failure) return;
    const bad = offendingBytes(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
    const shown = bad.subarray(0, SHOWN_BYTES).toString('latin1');
    this.failure = {
      code,
      message,
      bytes: JSON.stringify(shown) + (bad.length > SHOWN_BYTES ? ` (+${bad.length - SHOWN_BYTES} bytes)` : ''),
    };
    this.onFailure(this.failure);
    this.fireError(new Error(`${code}: ${message}`));
  }
}

/**
 * The stray output inside the chunk where framing broke: the first line that
 * is neither a frame header, the blank line after it, nor frame payload
 * (which starts with "{"), so a print() shows as itself, not as its frames.
 */
export function offendingBytes(chunk: Buffer): Buffer {
  let start = 0;
  while (start < chunk.length) {
    const nl = chunk.indexOf(10, start);
    const end = nl < 0 ? chunk.length : nl + 1;
    const line = chunk.subarray(start, end);
    const text = line.subarray(0, 40).toString('latin1');
    if (!/^(content-length:|content-type:|\r?\n$|\{)/i.test(text)) return line;
    start = end;
  }
  return chunk;
}
