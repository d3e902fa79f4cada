import type { MessagePart } from '@host/protocol';
import { MAX_COMPOSITE_DEPTH, composite, mentionUser, normalizeMessage, normalizeParsedMessage, parseTarget, text } from './index';

function nested(levels: number, inner: MessagePart): MessagePart {
  let part = inner;
  for (let i = 0; i < levels; i++) part = composite(part);
  return part;
}

describe('normalizeMessage', () => {
  it('refuses hostile nesting as data instead of exhausting the stack', () => {
    // Built without recursion, as JSON.parse would build it from a large frame.
    const deep = nested(100_000, text('x'));
    const r = normalizeMessage({ parts: [deep] });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('message.part.unsupported');
      expect(r.error.message).toContain(`${MAX_COMPOSITE_DEPTH + 1} levels deep; at most ${MAX_COMPOSITE_DEPTH}`);
    }
  });

  it('refuses a deep composite hidden under a non-composite part', () => {
    const r = normalizeMessage({ parts: [{ type: 'text', text: 'a', parts: [nested(50_000, text('x'))] } as unknown as MessagePart] });
    expect(r.ok || r.error.message).toContain('parts[0] is a text part and cannot have "parts"');
  });

  it('does not change its input', () => {
    const input = { parts: [text('a'), composite(text('b'), mentionUser('U1')), text('')] };
    const copy = structuredClone(input);
    expect(normalizeMessage(input).ok).toBe(true);
    expect(input).toEqual(copy);
  });

  it('reports the first fault in document order with its path', () => {
    const r = normalizeMessage({ parts: [text('a'), composite(mentionUser('ok_1'), mentionUser('x y')), mentionUser('')] });
    expect(r.ok || r.error.message).toContain('"x y" at parts[1].parts[1]');
  });
});

describe('normalizeParsedMessage', () => {
  it('keeps the depth limit for messages built in code', () => {
    expect(normalizeParsedMessage({ format: 'text', parts: [nested(MAX_COMPOSITE_DEPTH, text('x'))] })).toEqual({
      ok: true,
      value: { format: 'text', parts: [text('x')] },
    });
    const r = normalizeParsedMessage({ format: 'text', parts: [nested(MAX_COMPOSITE_DEPTH + 1, text('x'))] });
    expect(r.ok || r.error.code).toBe('message.part.unsupported');
  });

  it('defaults the format to text', () => {
    expect(normalizeParsedMessage({ parts: [text('x')] })).toEqual({ ok: true, value: { format: 'text', parts: [text('x')] } });
  });
});

describe('parseTarget', () => {
  it('accepts a target and explains a wrong one', () => {
    expect(parseTarget({ type: 'group', id: 'G1' })).toEqual({ ok: true, value: { type: 'group', id: 'G1' } });
    const cases: [unknown, string][] = [
      [null, 'not null'],
      [{ type: 'guild', id: 'G' }, 'got string "guild"'],
      [{ type: 'group', id: '' }, '"target.id" is empty'],
      [{ type: 'group', id: 'G', extra: 1 }, '"target.extra" is not a protocol v2 field'],
    ];
    for (const [input, text] of cases) {
      const r = parseTarget(input);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe('message.target.invalid');
        expect(r.error.message).toContain(text);
      }
    }
  });
});
