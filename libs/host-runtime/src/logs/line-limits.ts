import { LIMITS } from '@host/protocol';

const MARK = ' [truncated]';

/** Caps a log line at LIMITS.maxLogLineChars, saying so at its end. */
export function capLogLine(text: string, max: number = LIMITS.maxLogLineChars): string {
  if (text.length <= max) return text;
  return text.slice(0, max - MARK.length) + MARK;
}

/**
 * Splits a byte stream (a plugin's stderr) into capped lines. Memory stays
 * bounded whatever the plugin writes: a line longer than the cap is emitted
 * cut at the cap, and the rest of it is skipped up to the next newline.
 */
export class LineSplitter {
  private partial = '';
  private skipping = false;
  private readonly decoder = new TextDecoder('utf-8');

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly max: number = LIMITS.maxLogLineChars,
  ) {}

  push(chunk: Uint8Array): void {
    const text = this.decoder.decode(chunk, { stream: true });
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      const piece = text.slice(start, nl < 0 ? text.length : nl);
      if (!this.skipping) this.partial += piece.slice(0, this.max + 1 - this.partial.length);
      if (!this.skipping && this.partial.length > this.max) {
        this.onLine(capLogLine(this.partial, this.max));
        this.partial = '';
        this.skipping = true;
      }
      if (nl < 0) return;
      if (!this.skipping) this.onLine(this.partial.replace(/\r$/, ''));
      this.partial = '';
      this.skipping = false;
      start = nl + 1;
    }
  }

  /** Emits an unterminated last line. */
  end(): void {
    const rest = this.partial + this.decoder.decode();
    if (rest && !this.skipping) this.onLine(capLogLine(rest, this.max));
    this.partial = '';
  }
}
