import type { Writable } from 'node:stream';
import { frameHeader, LIMITS, Methods } from '@host/protocol';
import { AbstractMessageWriter, Message, type MessageWriter } from 'vscode-jsonrpc/node';
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
 * Bytes written to the plugin's stdin that it has not read yet (beyond what
 * the pipe itself holds) after which the plugin counts as not reading its
 * answers: room for two frames of the largest size and then some, so only a
 * plugin that stopped reading reaches it.
 */
export const DEFAULT_MAX_UNREAD_BYTES = 2 * LIMITS.maxPayloadBytes + 1024 * 1024;

/**
 * Once this many bytes wait in the stream, further frames wait in the writer
 * instead, joined into large strings: the stream keeps one record per write,
 * which for small frames costs more memory than the frame itself.
 */
const SPILL_AT_BYTES = 1024 * 1024;
const SPILL_CHUNK_BYTES = 64 * 1024;

export interface WriterLimits {
  /** See DEFAULT_MAX_UNREAD_BYTES. */
  maxUnreadBytes: number;
  /** Called once when the unread bytes pass `maxUnreadBytes`; later writes fail. */
  onOverflow: (unreadBytes: number) => void;
}

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
 *
 * With `limits`, the bytes waiting for the plugin to read them are bounded:
 * past `maxUnreadBytes` the writer reports the overflow once and refuses
 * every later frame, so a plugin that never reads its stdin cannot make the
 * host buffer its answers without end.
 */
export class FramedMessageWriter extends AbstractMessageWriter implements MessageWriter {
  private closed = false;
  private corked = false;
  private heldTurns = 0;
  private startsSeen = 0;
  private overflowed = false;
  /** Frames waiting for the stream to drain, joined into chunks of about SPILL_CHUNK_BYTES; then the last, unjoined ones. */
  private spilled: string[] = [];
  private spillTail: string[] = [];
  private spillTailBytes = 0;
  private spilledBytes = 0;

  constructor(
    private readonly writable: Writable,
    private readonly backlog?: RequestBacklog,
    private readonly limits?: WriterLimits,
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
      this.spilled = [];
      this.spillTail = [];
      this.fireClose();
    });
    writable.on('drain', this.unspill);
  }

  /** Bytes written and not yet taken by the plugin (beyond the pipe's own buffer). */
  get unreadBytes(): number {
    return this.writable.writableLength + this.spilledBytes;
  }

  write(msg: Message): Promise<void> {
    if (this.closed || this.writable.destroyed || this.writable.writableEnded) {
      return Promise.reject(new Error('the plugin stdin is closed'));
    }
    if (this.overflowed) return Promise.reject(new Error('the plugin does not read its stdin'));
    if (!this.corked) {
      this.corked = true;
      this.heldTurns = 0;
      this.startsSeen = this.backlog?.starts ?? 0;
      this.writable.cork();
      process.nextTick(this.flush);
    }
    // As text: the stream encodes all frames of one writev into a single
    // buffer, where encodeFrame would allocate a byte array per frame.
    const json = serialize(msg);
    const bytes = Buffer.byteLength(json, 'utf8');
    const frame = frameHeader(bytes) + json;
    if (this.spilledBytes > 0 || this.writable.writableLength >= SPILL_AT_BYTES) this.spill(frame, bytes + frame.length - json.length);
    else this.writable.write(frame, 'utf8');
    const unread = this.unreadBytes;
    if (this.limits && unread > this.limits.maxUnreadBytes) {
      this.overflowed = true;
      this.limits.onOverflow(unread);
    }
    return Promise.resolve();
  }

  end(): void {
    this.closed = true;
    this.unspill();
    this.writable.end();
  }

  private spill(frame: string, bytes: number): void {
    this.spillTail.push(frame);
    this.spillTailBytes += bytes;
    this.spilledBytes += bytes;
    if (this.spillTailBytes >= SPILL_CHUNK_BYTES) {
      this.spilled.push(this.spillTail.join(''));
      this.spillTail = [];
      this.spillTailBytes = 0;
    }
  }

  /** The stream drained: hand it the spilled frames, in order, until it is full again. */
  private readonly unspill = () => {
    if (this.spilledBytes === 0) return;
    if (this.spillTail.length) {
      this.spilled.push(this.spillTail.join(''));
      this.spillTail = [];
      this.spillTailBytes = 0;
    }
    while (this.spilled.length && !this.writable.destroyed) {
      const chunk = this.spilled.shift()!;
      this.spilledBytes -= Buffer.byteLength(chunk, 'utf8');
      if (!this.writable.write(chunk, 'utf8') && this.writable.writableLength >= SPILL_AT_BYTES) break;
    }
    if (this.spilled.length === 0) this.spilledBytes = 0;
  };

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

/** Requests whose params are one event object handed to every recipient of the event. */
const EVENT_METHODS = new Set<string>([Methods.message.method, Methods.deliver.method]);

/**
 * The JSON of the last event written, by object identity, for the current
 * turn only: routing hands one event object to each of its recipients in one
 * synchronous pass, so a fan-out serialises it once instead of once per
 * recipient. Cleared on the next microtask, so an object changed later is
 * serialised again.
 */
const lastEvent: { params: object | null; json: string } = { params: null, json: '' };
const forgetLastEvent = (): void => {
  lastEvent.params = null;
  lastEvent.json = '';
};

/** `JSON.stringify(msg)`, the same text, with an event's params serialised once per turn (see lastEvent). */
export function serialize(msg: Message): string {
  if (!Message.isRequest(msg) || !EVENT_METHODS.has(msg.method) || typeof msg.params !== 'object' || msg.params === null) {
    return JSON.stringify(msg);
  }
  if (lastEvent.params !== msg.params) {
    if (lastEvent.params === null) queueMicrotask(forgetLastEvent);
    lastEvent.json = JSON.stringify(msg.params);
    lastEvent.params = msg.params;
  }
  // vscode-jsonrpc builds a request with these members in this order, which JSON.stringify keeps.
  return `{"jsonrpc":${JSON.stringify(msg.jsonrpc)},"id":${JSON.stringify(msg.id)},"method":${JSON.stringify(msg.method)},"params":${lastEvent.json}}`;
}
