import { LIMITS } from '@host/protocol';
import { capLogLine, LineSplitter } from './line-limits';

describe('LineSplitter', () => {
  const split = (chunks: (string | Uint8Array)[], max?: number) => {
    const lines: string[] = [];
    const s = new LineSplitter((l) => lines.push(l), max);
    for (const c of chunks) s.push(typeof c === 'string' ? Buffer.from(c) : c);
    s.end();
    return lines;
  };

  it('splits lines across chunks and drops CR of CRLF', () => {
    expect(split(['one\r\ntw', 'o\nthr', 'ee'])).toEqual(['one', 'two', 'three']);
  });

  it('keeps a multi-byte character split between chunks', () => {
    const bytes = Buffer.from('héllo\n');
    expect(split([bytes.subarray(0, 2), bytes.subarray(2)])).toEqual(['héllo']);
  });

  it('cuts a line longer than the cap and skips the rest of it', () => {
    const lines = split(['x'.repeat(30), 'y'.repeat(30), '\nnext\n'], 20);
    expect(lines).toEqual([capLogLine('x'.repeat(21), 20), 'next']);
    expect(lines[0]).toHaveLength(20);
  });

  it('caps at LIMITS.maxLogLineChars by default', () => {
    expect(capLogLine('z'.repeat(LIMITS.maxLogLineChars + 10))).toHaveLength(LIMITS.maxLogLineChars);
    expect(capLogLine('short')).toBe('short');
  });
});
