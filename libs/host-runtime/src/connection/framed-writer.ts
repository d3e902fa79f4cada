import type { Writable } from 'node:stream';
import { encodeFrame } from '@host/protocol';
import { AbstractMessageWriter, type Message, type MessageWriter } from 'vscode-jsonrpc/node';

/**
 * A vscode-jsonrpc writer that encodes with the protocol's `encodeFrame`. Each
 * frame is handed to the stream whole, in one `write` call, and the stream
 * keeps writes in order, so concurrent replies never interleave bytes.
 */
export class FramedMessageWriter extends AbstractMessageWriter implements MessageWriter {
  private closed = false;
  private corked = false;
  private readonly uncork = () => {
    this.corked = false;
    this.writable.uncork();
  };

  constructor(private readonly writable: Writable) {
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
    // Frames written in the same tick leave in one writev: under load one
    // system call carries several frames instead of one each.
    if (!this.corked) {
      this.corked = true;
      this.writable.cork();
      process.nextTick(this.uncork);
    }
    this.writable.write(encodeFrame(msg));
    return Promise.resolve();
  }

  end(): void {
    this.closed = true;
    this.writable.end();
  }
}
