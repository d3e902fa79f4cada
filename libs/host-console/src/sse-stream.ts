import type { Response } from 'express';

/** Bytes one Server-Sent Events client may leave unread before it is disconnected. */
export const DEFAULT_SSE_MAX_BUFFERED_BYTES = 1024 * 1024;

export interface SseStreamOptions {
  /** Interval of keep-alive comments. */
  heartbeatMilliseconds: number;
  /** See DEFAULT_SSE_MAX_BUFFERED_BYTES. */
  maxBufferedBytes?: number;
  /** Called once when the client fell behind and was disconnected. */
  onSlowClient?: (bufferedBytes: number) => void;
}

/**
 * One Server-Sent Events response that respects backpressure: what the
 * client has not read yet (the response's buffer plus its socket's) stays
 * below `maxBufferedBytes`. A client that falls further behind is
 * disconnected instead of making the host buffer the stream for it; it can
 * reconnect (the stream sends `retry:`) and ask for recent history.
 */
export class SseStream {
  private closedFlag = false;
  private readonly timer: NodeJS.Timeout;
  private readonly maxBuffered: number;
  private readonly closeListeners: (() => void)[] = [];

  constructor(
    private readonly res: Response,
    private readonly o: SseStreamOptions,
  ) {
    this.maxBuffered = o.maxBufferedBytes ?? DEFAULT_SSE_MAX_BUFFERED_BYTES;
    res.status(200).set({
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    this.timer = setInterval(() => this.write(': keep-alive\n\n'), o.heartbeatMilliseconds);
    this.timer.unref();
    res.on('close', () => this.finish());
    this.write('retry: 3000\n\n');
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  /** Calls `listener` once when the stream ends (client gone or disconnected). */
  onClose(listener: () => void): void {
    if (this.closedFlag) listener();
    else this.closeListeners.push(listener);
  }

  /** Sends one event; false when the stream is closed (or was just closed for a slow client). */
  send(event: string, data: unknown): boolean {
    return this.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** Bytes written and not yet taken by the client's connection. */
  get bufferedBytes(): number {
    return this.res.writableLength;
  }

  private write(text: string): boolean {
    if (this.closedFlag) return false;
    const buffered = this.res.writableLength;
    if (buffered + Buffer.byteLength(text) > this.maxBuffered) {
      this.o.onSlowClient?.(buffered);
      this.res.destroy();
      this.finish();
      return false;
    }
    this.res.write(text);
    return true;
  }

  private finish(): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    clearInterval(this.timer);
    for (const l of this.closeListeners.splice(0)) l();
  }
}
