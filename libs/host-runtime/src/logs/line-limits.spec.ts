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

describe('LineSplitter with a gate', () => {
  it('decodes only the lines the gate admits and counts the rest of the chunk without reading it', () => {
    const lines: string[] = [];
    let budget = 2;
    let dropped = 0;
    const s = new LineSplitter((l) => lines.push(l), 20, { admit: () => budget-- > 0, dropped: (n) => (dropped += n) });
    s.push(Buffer.from('a\nb\nc\nd\ne\npart'));
    expect(lines).toEqual(['a', 'b']);
    expect(dropped).toBe(3);
    budget = 1;
    s.push(Buffer.from('ial\nf\n'));
    // The line begun before the drop is whole again once the budget is back.
    expect(lines).toEqual(['a', 'b', 'partial']);
    expect(dropped).toBe(4);
    s.push(Buffer.from('unterminated'));
    s.end();
    expect(dropped).toBe(5);
  });

  it('counts a line past the cap once, cut or dropped', () => {
    const lines: string[] = [];
    let dropped = 0;
    const s = new LineSplitter((l) => lines.push(l), 10, { admit: () => false, dropped: (n) => (dropped += n) });
    s.push(Buffer.from('x'.repeat(100)));
    s.push(Buffer.from('x'.repeat(100) + '\n'));
    expect(lines).toEqual([]);
    expect(dropped).toBe(1);
  });
});
