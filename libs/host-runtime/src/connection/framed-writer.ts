import type { Writable } from 'node:stream';
import { frameHeader } from '@host/protocol';
import { AbstractMessageWriter, type Message, type MessageWriter } from 'vscode-jsonrpc/node';
import type { RequestBacklog } from './request-backlog';

/**
 * Bounds on holding frames for a burst, so a plugin that never stops sending
 * cannot starve its answers. Short holds also let the plugin start on part of
 * a burst while the host works on the rest (8 turns measured best at c=32,
 * against 2, 4 and 32).
 */
export const MAX_HELD_TURNS = 8;
const MAX_HELD_BYTES = 256 * 1024;

/**
 * A vscode-jsonrpc writer producing the protocol's frames (the same bytes as
 * `encodeFrame`). Each frame is handed to the stream whole, in one `write` call, and the stream
 * keeps writes in order, so concurrent replies never interleave bytes.
 *
 * Frames written in one tick leave in one writev. With a `backlog`, frames are
 * held longer while requests the connection has received are still waiting to
 * be started (it starts one per event-loop turn): their answers follow within
 * the next turns and leave together. Holding stops as soon as no request is
 * waiting, when a turn passes without one being started, or at the bounds.
 */
export class FramedMessageWriter extends AbstractMessageWriter implements MessageWriter {
  private closed = false;
  private corked = false;
  private heldTurns = 0;
  private startsSeen = 0;

  constructor(
    private readonly writable: Writable,
    private readonly backlog?: RequestBacklog,
  ) {
    super();
    // A child that exits makes its stdin fail with EPIPE; without a listener
    // that error would crash the host.
    writable.on('error', (e) => {
      this.closed = true;
      this.fireError(e);
    });
    writable.on('close', () => {
      this.closed = true;
      this.fireClose();
    });
  }

  write(msg: Message): Promise<void> {
    if (this.closed || this.writable.destroyed || this.writable.writableEnded) {
      return Promise.reject(new Error('the plugin stdin is closed'));
    }
    if (!this.corked) {
      this.corked = true;
      this.heldTurns = 0;
      this.startsSeen = this.backlog?.starts ?? 0;
      this.writable.cork();
      process.nextTick(this.flush);
    }
    // As text: the stream encodes all frames of one writev into a single
    // buffer, where encodeFrame would allocate a byte array per frame.
    const json = JSON.stringify(msg);
    this.writable.write(frameHeader(Buffer.byteLength(json, 'utf8')) + json, 'utf8');
    return Promise.resolve();
  }

  end(): void {
    this.closed = true;
    this.writable.end();
  }

  private readonly flush = () => {
    const b = this.backlog;
    if (b && b.pending > 0 && this.heldTurns < MAX_HELD_TURNS && this.writable.writableLength < MAX_HELD_BYTES && !this.closed) {
      // The first check holds; later ones only while requests keep being started.
      if (this.heldTurns === 0 || b.starts !== this.startsSeen) {
        this.startsSeen = b.starts;
        this.heldTurns++;
        setImmediate(this.flush);
        return;
      }
    }
    this.corked = false;
    this.writable.uncork();
  };
}
