import type { FramingErrorCode } from './error-codes';
import { checkJsonShape, JSON_SHAPE_LIMITS } from './json-shape';
import { LIMITS } from './limits';

/**
 * stdio framing: `Content-Length: N\r\n\r\n` then N bytes of UTF-8 JSON.
 *
 * The decoder is strict on purpose: a header line that is not `Name: value`
 * is reported as soon as its line ends, so a plugin that prints to stdout is
 * caught at its first line rather than hanging the pipe. After an error the
 * stream cannot be resynchronised and the decoder stays failed.
 */
export type FrameEvent =
  | { kind: 'message'; message: JsonRpcMessage }
  /** `bytes`: the start of the unconsumed stream where the error was found (at most {@link ERROR_CONTEXT_BYTES}), for reports. */
  | { kind: 'error'; code: FramingErrorCode; message: string; bytes?: Uint8Array };

/** How many bytes of the failing stream an error event carries. */
export const ERROR_CONTEXT_BYTES = 256;

export type JsonRpcId = string | number | null;
export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id?: string | number;
  method: string;
  params?: unknown;
}
export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}
export type JsonRpcMessage = JsonRpcRequest | JsonRpcResponse;

export interface FrameLimits {
  maxHeaderBytes: number;
  maxPayloadBytes: number;
  /** Deepest nesting of a payload (default LIMITS.maxJsonDepth). */
  maxJsonDepth?: number;
  /** Most entries of one array or object of a payload (default LIMITS.maxJsonEntries). */
  maxJsonEntries?: number;
}

const CR = 13;
const LF = 10;
const CANONICAL_PREFIX = Uint8Array.from('Content-Length: ', (c) => c.charCodeAt(0));
const HEADER_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$/;
const CONTENT_TYPE = /^application\/vscode-jsonrpc\s*;\s*charset\s*=\s*"?utf-?8"?$/i;

/** Checks the JSON-RPC 2.0 shape of a decoded payload; returns an error text or null. */
export function checkJsonRpcShape(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'payload is not a JSON object';
  const m = value as Record<string, unknown>;
  if (m['jsonrpc'] !== '2.0') return '"jsonrpc" must be "2.0"';
  const id = m['id'];
  const idOk = id === undefined || typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));
  if ('method' in m) {
    if (typeof m['method'] !== 'string' || m['method'].length === 0) return '"method" must be a non-empty string';
    if (!idOk || id === null) return '"id" of a request must be a string or an integer';
    return null;
  }
  if (!('id' in m) || !(idOk || id === null)) return 'a response needs "id"';
  const hasResult = 'result' in m;
  const hasError = 'error' in m;
  if (hasResult === hasError) return 'a response needs exactly one of "result" and "error"';
  if (hasError) {
    const e = m['error'] as Record<string, unknown> | null;
    if (typeof e !== 'object' || e === null || !Number.isInteger(e['code']) || typeof e['message'] !== 'string') {
      return '"error" must be {code: integer, message: string}';
    }
  }
  return null;
}

export class FrameDecoder {
  /** Unconsumed bytes are `store[start, end)`; the store grows by doubling. */
  private store = new Uint8Array(4096);
  private start = 0;
  private end_ = 0;
  private failed = false;
  /** Parsed header of the frame whose payload is still arriving. */
  private pending: { headerEnd: number; length: number } | null = null;
  private readonly utf8 = new TextDecoder('utf-8', { fatal: true });
  private readonly shape: { maxDepth: number; maxEntries: number };

  constructor(private readonly limits: FrameLimits = LIMITS) {
    this.shape = {
      maxDepth: limits.maxJsonDepth ?? JSON_SHAPE_LIMITS.maxDepth,
      maxEntries: limits.maxJsonEntries ?? JSON_SHAPE_LIMITS.maxEntries,
    };
  }

  /** Feeds bytes; returns the messages and at most one (fatal) error they complete. */
  push(chunk: Uint8Array): FrameEvent[] {
    if (this.failed) return [];
    this.append(chunk);
    const out: FrameEvent[] = [];
    for (;;) {
      const ev = this.next();
      if (!ev) break;
      out.push(ev);
      if (ev.kind === 'error') {
        this.failed = true;
        ev.bytes = this.buf.slice(0, ERROR_CONTEXT_BYTES);
        this.start = this.end_ = 0;
        break;
      }
    }
    return out;
  }

  /** Signals end of stream: clean between frames, an error inside one. */
  end(): FrameEvent[] {
    if (this.failed || this.buf.length === 0) return [];
    this.failed = true;
    return [fail('framing.eof_in_frame', `stream ended with ${this.buf.length} bytes of an unfinished frame`)];
  }

  /** True once an error was reported. */
  get broken(): boolean {
    return this.failed;
  }

  private get buf(): Uint8Array {
    return this.store.subarray(this.start, this.end_);
  }

  private append(chunk: Uint8Array): void {
    const used = this.end_ - this.start;
    if (this.end_ + chunk.length > this.store.length) {
      let cap = this.store.length;
      while (cap < used + chunk.length) cap *= 2;
      const next = cap === this.store.length ? this.store : new Uint8Array(cap);
      next.set(this.store.subarray(this.start, this.end_), 0);
      this.store = next;
      this.start = 0;
      this.end_ = used;
    }
    this.store.set(chunk, this.end_);
    this.end_ += chunk.length;
  }

  private consume(n: number): void {
    this.start += n;
    if (this.start === this.end_) this.start = this.end_ = 0;
  }

  private next(): FrameEvent | null {
    if (this.pending) return this.takePayload(this.pending.headerEnd, this.pending.length);
    const canonical = this.canonicalHeader();
    if (canonical >= 0) return this.checkedPayload(canonical, this.canonicalLength);
    const buf = this.buf;
    // Header block: check each completed line as it arrives.
    let headerEnd = -1;
    const lines: string[] = [];
    let lineStart = 0;
    for (let i = 0; i < buf.length; i++) {
      if (buf[i] !== LF) continue;
      if (i === 0 || buf[i - 1] !== CR) {
        return fail('framing.header.malformed', `header line ${quote(buf.subarray(lineStart, i))} does not end with CRLF`);
      }
      const line = latin1(buf.subarray(lineStart, i - 1));
      if (line === '') {
        headerEnd = i + 1;
        break;
      }
      lines.push(line);
      lineStart = i + 1;
      if (!HEADER_LINE.test(line))
        return fail('framing.header.malformed', `header line ${JSON.stringify(line.slice(0, 80))} is not "Name: value"`);
      if (i + 1 > this.limits.maxHeaderBytes) break;
    }
    if (headerEnd < 0) {
      if (buf.length > this.limits.maxHeaderBytes) {
        return fail('framing.header.too_long', `header block exceeds ${this.limits.maxHeaderBytes} bytes`);
      }
      return null;
    }
    if (headerEnd > this.limits.maxHeaderBytes) {
      return fail('framing.header.too_long', `header block is ${headerEnd} bytes, more than ${this.limits.maxHeaderBytes}`);
    }
    let length: number | undefined;
    let sawType = false;
    for (const line of lines) {
      const [, rawName, value] = HEADER_LINE.exec(line) as RegExpExecArray;
      const name = (rawName as string).toLowerCase();
      if (name === 'content-length') {
        if (length !== undefined) return fail('framing.header.duplicate', 'Content-Length appears twice');
        if (!/^\d{1,10}$/.test(value as string))
          return fail('framing.content_length.invalid', `Content-Length ${JSON.stringify(value)} is not a decimal integer`);
        length = Number(value);
      } else if (name === 'content-type') {
        if (sawType) return fail('framing.header.duplicate', 'Content-Type appears twice');
        sawType = true;
        if (!CONTENT_TYPE.test(value as string))
          return fail('framing.content_type.unsupported', `Content-Type ${JSON.stringify(value)} is not supported`);
      } else {
        return fail('framing.header.unknown', `unknown header ${JSON.stringify(rawName)}`);
      }
    }
    if (length === undefined) return fail('framing.content_length.missing', 'frame has no Content-Length header');
    return this.checkedPayload(headerEnd, length);
  }

  private checkedPayload(headerEnd: number, length: number): FrameEvent | null {
    if (length === 0) return fail('framing.payload.empty', 'Content-Length is 0');
    if (length > this.limits.maxPayloadBytes) {
      return fail('framing.payload.too_large', `Content-Length ${length} exceeds ${this.limits.maxPayloadBytes} bytes`);
    }
    return this.takePayload(headerEnd, length);
  }

  /** Set by canonicalHeader: the Content-Length it read. */
  private canonicalLength = 0;

  /**
   * The header every encoder writes, `Content-Length: N\r\n\r\n`, read from
   * the bytes without building strings: returns where the payload starts, or
   * -1 when the buffer holds anything else (other headers, spacing, casing,
   * an error, an incomplete header), which the general parser then handles.
   * It accepts exactly what the general parser accepts for this form.
   */
  private canonicalHeader(): number {
    const store = this.store;
    const start = this.start;
    const end = this.end_;
    const prefix = CANONICAL_PREFIX.length;
    if (end - start < prefix + 5) return -1;
    for (let k = 0; k < prefix; k++) if (store[start + k] !== CANONICAL_PREFIX[k]) return -1;
    let i = start + prefix;
    let length = 0;
    while (i < end && i - start - prefix < 10 && store[i]! >= 0x30 && store[i]! <= 0x39) length = length * 10 + store[i++]! - 0x30;
    const digits = i - start - prefix;
    if (digits === 0 || end - i < 4) return -1;
    if (store[i] !== CR || store[i + 1] !== LF || store[i + 2] !== CR || store[i + 3] !== LF) return -1;
    const headerEnd = i + 4 - start;
    if (headerEnd > this.limits.maxHeaderBytes) return -1;
    this.canonicalLength = length;
    return headerEnd;
  }

  private takePayload(headerEnd: number, length: number): FrameEvent | null {
    if (this.end_ - this.start < headerEnd + length) {
      this.pending = { headerEnd, length };
      return null;
    }
    this.pending = null;
    const from = this.start + headerEnd;
    const payload = this.store.subarray(from, from + length);
    let text: string;
    try {
      text = this.utf8.decode(payload);
      this.consume(headerEnd + length);
    } catch {
      return fail('framing.utf8.invalid', 'payload is not valid UTF-8');
    }
    // Before parsing: a payload nested thousands deep parses, then overflows the stack of whoever reads it next.
    const tooComplex = checkJsonShape(payload, this.shape);
    if (tooComplex) return fail('framing.json.too_complex', `payload is refused: ${tooComplex.message}`);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      return fail('framing.json.invalid', `payload is not JSON: ${(e as Error).message}`);
    }
    const shape = checkJsonRpcShape(value);
    if (shape) return fail('framing.message.invalid', shape);
    return { kind: 'message', message: value as JsonRpcMessage };
  }
}

const encoder = new TextEncoder();

/**
 * The header block of a frame whose payload is `byteLength` bytes of UTF-8.
 * For writers that hand the payload to their stream as text (`header + json`),
 * which saves encoding each frame into its own byte array.
 */
export function frameHeader(byteLength: number): string {
  return `Content-Length: ${byteLength}\r\n\r\n`;
}

/** Encodes one message as a frame. */
export function encodeFrame(message: unknown): Uint8Array {
  const body = encoder.encode(JSON.stringify(message));
  const head = encoder.encode(frameHeader(body.length));
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}

function fail(code: FramingErrorCode, message: string): FrameEvent {
  return { kind: 'error', code, message };
}

function latin1(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return s;
}

function quote(bytes: Uint8Array): string {
  return JSON.stringify(latin1(bytes.subarray(0, 80)));
}
