import { LIMITS } from '@host/protocol';

const MARK = ' [truncated]';

/** Caps a log line at LIMITS.maxLogLineChars, saying so at its end. */
export function capLogLine(text: string, max: number = LIMITS.maxLogLineChars): string {
  if (text.length <= max) return text;
  return text.slice(0, max - MARK.length) + MARK;
}

/**
 * Decides, line by line, whether a line is read at all (a plugin's log rate).
 * A line it refuses is counted and never decoded, and neither are the rest of
 * the chunk's lines: past the limit a flood costs a scan for newlines, not a
 * string per line.
 */
export interface LineGate {
  /** Whether the next line may be read; true takes it from the budget. */
  admit(): boolean;
  /** Lines dropped without being read. */
  dropped(lines: number): void;
}

/**
 * Splits a byte stream (a plugin's stderr) into capped lines. Memory stays
 * bounded whatever the plugin writes: a line longer than the cap is emitted
 * cut at the cap, and the rest of it is skipped up to the next newline. The
 * bytes are split at newlines before decoding (a newline byte is never part of
 * a multi-byte UTF-8 character), so a line that is dropped is never decoded.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private partBytes = 0;
  private skipping = false;
  /** Bytes that always hold more than `max` characters (UTF-8 takes at most 4 bytes per character). */
  private readonly maxBytes: number;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly max: number = LIMITS.maxLogLineChars,
    private readonly gate?: LineGate,
  ) {
    this.maxBytes = (max + 1) * 4;
  }

  push(chunk: Uint8Array): void {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    for (;;) {
      const nl = bytes.indexOf(10, start);
      if (nl < 0) {
        this.keep(bytes, start, bytes.length);
        return;
      }
      if (this.skipping) {
        this.skipping = false;
      } else if (this.gate && !this.gate.admit()) {
        // Over the rate: this line and every further whole line of the chunk are counted, not read.
        let lines = 1;
        let at = nl + 1;
        for (let next = bytes.indexOf(10, at); next >= 0; next = bytes.indexOf(10, at)) {
          lines++;
          at = next + 1;
        }
        this.gate.dropped(lines);
        this.clear();
        this.keep(bytes, at, bytes.length);
        return;
      } else if (this.partBytes === 0 && nl - start < this.maxBytes) {
        this.emit(bytes.toString('utf8', start, nl).replace(/\r$/, ''));
      } else {
        this.keep(bytes, start, nl);
        if (!this.skipping) this.emit(this.text().replace(/\r$/, ''));
      }
      this.skipping = false;
      this.clear();
      start = nl + 1;
    }
  }

  /** Emits an unterminated last line. */
  end(): void {
    if (this.partBytes > 0 && !this.skipping) {
      if (!this.gate || this.gate.admit()) this.emit(this.text());
      else this.gate.dropped(1);
    }
    this.clear();
    this.skipping = false;
  }

  /** Keeps part of the current line; one past the cap is emitted cut, and the rest of it skipped. */
  private keep(bytes: Buffer, from: number, to: number): void {
    if (this.skipping || to <= from) return;
    const piece = bytes.subarray(from, Math.min(to, from + this.maxBytes - this.partBytes));
    // A copy: the chunk itself is not kept alive by a few bytes of it.
    this.parts.push(Buffer.from(piece));
    this.partBytes += piece.length;
    if (this.partBytes < this.maxBytes) return;
    if (!this.gate || this.gate.admit()) this.emit(this.text());
    else this.gate.dropped(1);
    this.clear();
    this.skipping = true;
  }

  private text(): string {
    return (this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts)).toString('utf8');
  }

  private emit(line: string): void {
    this.onLine(capLogLine(line, this.max));
  }

  private clear(): void {
    this.parts = [];
    this.partBytes = 0;
  }
}
