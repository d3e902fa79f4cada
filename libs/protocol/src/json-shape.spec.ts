import { ERROR_CATALOG } from './error-codes';
import { encodeFrame, FrameDecoder } from './framing';
import { checkJsonShape, EVENT_JSON_SHAPE_LIMITS, JSON_SHAPE_LIMITS, parseJsonWithin } from './json-shape';
import { LIMITS } from './limits';
import { parseManifestText } from './parse';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('checkJsonShape', () => {
  it('takes documents up to the depth limit and refuses one level more, as text or bytes', () => {
    expect(checkJsonShape(nested(LIMITS.maxJsonDepth))).toBeNull();
    expect(checkJsonShape(nested(LIMITS.maxJsonDepth + 1))).toMatchObject({ kind: 'depth', limit: LIMITS.maxJsonDepth });
    expect(checkJsonShape(Buffer.from(nested(LIMITS.maxJsonDepth + 1)))).toMatchObject({ kind: 'depth' });
    expect(checkJsonShape(nested(LIMITS.maxEventJsonDepth + 1), EVENT_JSON_SHAPE_LIMITS)).toMatchObject({ kind: 'depth' });
  });

  it('refuses the 6,000-level array of a 12 KB body at the bracket that opens level 65, without parsing it', () => {
    const body = `{"op":0,"d":{"x":${nested(6000)}}}`;
    expect(body.length).toBeLessThan(64 * 1024);
    expect(checkJsonShape(body)).toMatchObject({ kind: 'depth', offset: body.indexOf('[') + LIMITS.maxJsonDepth - 2 });
  });

  it('counts the entries of each container apart, and not those inside strings', () => {
    const row = (n: number) => `[${Array.from({ length: n }, () => '1').join(',')}]`;
    expect(checkJsonShape(row(LIMITS.maxJsonEntries))).toBeNull();
    expect(checkJsonShape(`[${row(9_000)},${row(9_000)}]`)).toBeNull();
    expect(checkJsonShape(row(LIMITS.maxJsonEntries + 1))).toMatchObject({ kind: 'entries', limit: LIMITS.maxJsonEntries });
    expect(checkJsonShape(JSON.stringify({ s: ',,,[[[[{{{{"\\'.repeat(5_000) }))).toBeNull();
    const wide = `{${Array.from({ length: LIMITS.maxJsonEntries + 1 }, (_, i) => `"k${i}":0`).join(',')}}`;
    expect(checkJsonShape(wide)).toMatchObject({ kind: 'entries' });
  });

  it('parseJsonWithin says which check failed', () => {
    expect(parseJsonWithin('{"a":[1]}')).toEqual({ ok: true, value: { a: [1] } });
    expect(parseJsonWithin(nested(LIMITS.maxJsonDepth + 1))).toMatchObject({ ok: false, reason: 'shape' });
    expect(parseJsonWithin('{"a":')).toMatchObject({ ok: false, reason: 'syntax' });
  });

  it('the catalogue messages state the limits of LIMITS', () => {
    for (const code of ['framing.json.too_complex', 'http.response.too_complex', 'manifest.json.too_complex'] as const) {
      expect(ERROR_CATALOG[code].message).toContain(`deeper than ${JSON_SHAPE_LIMITS.maxDepth} levels`);
      expect(ERROR_CATALOG[code].message).toContain(`${JSON_SHAPE_LIMITS.maxEntries.toLocaleString('en')} entries`);
    }
  });
});

describe('the JSON shape at the protocol entry points', () => {
  it('a stdio frame nested too deep is a framing error, not a message', () => {
    const d = new FrameDecoder();
    const ok = d.push(encodeFrame({ jsonrpc: '2.0', id: 1, result: JSON.parse(nested(LIMITS.maxJsonDepth - 1)) }));
    expect(ok).toEqual([expect.objectContaining({ kind: 'message' })]);
    const text = `{"jsonrpc":"2.0","method":"events.message","params":${nested(6000)}}`;
    const events = d.push(Buffer.from(`Content-Length: ${text.length}\r\n\r\n${text}`));
    expect(events).toEqual([expect.objectContaining({ kind: 'error', code: 'framing.json.too_complex' })]);
  });

  it('a manifest nested too deep gets manifest.json.too_complex', () => {
    expect(parseManifestText(`{"pluginId":${nested(100)}}`)).toMatchObject({
      ok: false,
      issues: [{ code: 'manifest.json.too_complex', path: '' }],
    });
  });
});
