/**
 * Property-based fuzzing of the stdio frame decoder. Runs per property come
 * from FUZZ_RUNS (small by default, so CI stays quick; `npx nx run
 * protocol:fuzz` runs many more) and FUZZ_SEED replays one run. Every input
 * that ever broke a property is kept in fuzz-regressions/framing.json and
 * replayed here first (see README, "Fuzzing").
 */
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FRAMING_ERRORS } from './error-codes';
import { encodeFrame, FrameDecoder, type FrameEvent, type FrameLimits } from './framing';

const RUNS = Number(process.env['FUZZ_RUNS']) || Number(process.env['FUZZ_LONG_RUNS']) || 200;
const PARAMS = { numRuns: RUNS, ...(process.env['FUZZ_SEED'] ? { seed: Number(process.env['FUZZ_SEED']) } : {}) };
const TIMEOUT = 60_000 + RUNS * 20;

/** Small limits so the fuzzer reaches them with small inputs. */
const LIMITS: FrameLimits = { maxHeaderBytes: 64, maxPayloadBytes: 256 };

interface Case {
  /** The byte stream, base64. */
  stream: string;
  /** Chunk boundaries as offsets into the stream. */
  cuts: number[];
}

const ascii = (s: string) => Uint8Array.from(Buffer.from(s, 'latin1'));

/** Pieces that look like frames, nearly frames, or nothing of the kind. */
const piece: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.jsonValue().map((v) => encodeFrame({ jsonrpc: '2.0', id: 1, result: v })),
  fc
    .record({ id: fc.oneof(fc.integer(), fc.string(), fc.constant(null)), method: fc.string(), params: fc.jsonValue() })
    .map((m) => encodeFrame({ jsonrpc: '2.0', ...m })),
  fc.jsonValue().map((v) => encodeFrame(v)),
  fc
    .constantFrom(
      'Content-Length: 2\r\n\r\n{}',
      'Content-Length: 0\r\n\r\n',
      'Content-Length: 99999999999\r\n\r\n',
      'Content-Length: 4294967296\r\n\r\n',
      'content-length:   27 \r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{"jsonrpc":"2.0","result":1}',
      'Content-Length: 1\r\nContent-Length: 1\r\n\r\n1',
      'Content-Type: text/plain\r\n\r\n',
      'X-Other: 1\r\n\r\n',
      'Content-Length: -1\r\n\r\n',
      'Content-Length: 1e3\r\n\r\n',
      'Content-Length: 3\n\n{}\n',
      'hello from console.log\n',
      '\r\n\r\n',
      ': value\r\n',
    )
    .map(ascii),
  fc.string({ unit: 'binary', maxLength: 40 }).map((s) => new Uint8Array(Buffer.from(s, 'utf8'))),
  fc.uint8Array({ maxLength: 80 }),
  fc.tuple(fc.nat({ max: 300 }), fc.uint8Array({ maxLength: 300 })).map(([n, body]) => {
    const head = ascii(`Content-Length: ${n}\r\n\r\n`);
    const out = new Uint8Array(head.length + body.length);
    out.set(head);
    out.set(body, head.length);
    return out;
  }),
);

const caseArb: fc.Arbitrary<Case> = fc.array(piece, { maxLength: 8 }).chain((pieces) => {
  const stream = Buffer.concat(pieces);
  return fc
    .uniqueArray(fc.nat({ max: Math.max(0, stream.length) }), { maxLength: 12 })
    .map((cuts) => ({ stream: stream.toString('base64'), cuts: cuts.sort((a, b) => a - b) }));
});

function chunksOf(c: Case): Uint8Array[] {
  const bytes = Buffer.from(c.stream, 'base64');
  const out: Uint8Array[] = [];
  let at = 0;
  for (const cut of [...c.cuts, bytes.length]) {
    const end = Math.min(Math.max(cut, at), bytes.length);
    out.push(new Uint8Array(bytes.subarray(at, end)));
    at = end;
  }
  return out;
}

function buffered(d: FrameDecoder): number {
  const inner = d as unknown as { start: number; end_: number };
  return inner.end_ - inner.start;
}

/** Decodes chunk by chunk, checking the invariants after every push. */
function decode(chunks: Uint8Array[]): FrameEvent[] {
  const d = new FrameDecoder(LIMITS);
  const events: FrameEvent[] = [];
  for (const chunk of chunks) {
    const wasBroken = d.broken;
    const got = d.push(chunk);
    if (wasBroken) expect(got).toEqual([]);
    events.push(...got);
    // Not more than one frame's worth is ever kept: a header up to its limit, or a header and a payload up to theirs.
    expect(buffered(d)).toBeLessThanOrEqual(LIMITS.maxHeaderBytes + LIMITS.maxPayloadBytes);
  }
  events.push(...d.end());
  return events;
}

function checkCase(c: Case): void {
  const events = decode(chunksOf(c));
  const errors = events.filter((e) => e.kind === 'error');
  expect(errors.length).toBeLessThanOrEqual(1);
  if (errors.length) expect(events[events.length - 1]).toBe(errors[0]);
  for (const e of errors) {
    expect(Object.keys(FRAMING_ERRORS)).toContain(e.code);
    expect(typeof e.message).toBe('string');
  }
  // The same bytes in one piece give the same messages and the same outcome.
  const whole = decode([Buffer.from(c.stream, 'base64')]);
  expect(events.filter((e) => e.kind === 'message')).toEqual(whole.filter((e) => e.kind === 'message'));
  // The error may differ by chunking (a long garbage line is "too_long" before its end arrives, "malformed" after), not whether there is one.
  expect(errors.length).toBe(whole.filter((e) => e.kind === 'error').length);
}

const regressions = JSON.parse(readFileSync(join(__dirname, '../fuzz-regressions/framing.json'), 'utf8')) as {
  cases: { name: string; input: Case }[];
};

describe('FrameDecoder (fuzz)', () => {
  it.each(regressions.cases.map((c) => [c.name, c.input] as const))('regression: %s', (_name, input) => checkCase(input));

  it(
    'never throws, reports only catalogued errors, buffers at most one frame and does not depend on chunking',
    () => {
      fc.assert(
        fc.property(caseArb, (c) => checkCase(c)),
        PARAMS,
      );
    },
    TIMEOUT,
  );

  it('an error carries the stream bytes where it was found, however they were split', () => {
    const stream = Buffer.concat([encodeFrame({ jsonrpc: '2.0', id: 1, result: null }), Buffer.from('raw-plugin starting\n')]);
    for (let cut = 1; cut < stream.length; cut++) {
      const d = new FrameDecoder(LIMITS);
      const events = [...d.push(stream.subarray(0, cut)), ...d.push(stream.subarray(cut))];
      const error = events.find((e) => e.kind === 'error');
      expect(error).toMatchObject({ code: 'framing.header.malformed' });
      expect(Buffer.from((error as { bytes: Uint8Array }).bytes).toString('latin1')).toBe('raw-plugin starting\n');
    }
  });

  it(
    'decodes every valid message exactly once however the bytes are split',
    () => {
      const message = fc.oneof(
        fc.record({ jsonrpc: fc.constant('2.0' as const), id: fc.integer(), result: fc.jsonValue() }),
        fc.record({
          jsonrpc: fc.constant('2.0' as const),
          id: fc.string(),
          method: fc.string({ minLength: 1 }),
          params: fc.jsonValue(),
        }),
      );
      fc.assert(
        fc.property(fc.array(message, { minLength: 1, maxLength: 6 }), fc.array(fc.nat(), { maxLength: 10 }), (messages, cuts) => {
          const bytes = Buffer.concat(messages.map((m) => encodeFrame(m)));
          const chunks = chunksOf({
            stream: bytes.toString('base64'),
            cuts: cuts.map((c) => c % (bytes.length + 1)).sort((a, b) => a - b),
          });
          const d = new FrameDecoder({ maxHeaderBytes: 64, maxPayloadBytes: 1 << 20 });
          const events = chunks.flatMap((c) => d.push(c));
          events.push(...d.end());
          expect(events).toEqual(messages.map((m) => ({ kind: 'message', message: JSON.parse(JSON.stringify(m)) })));
        }),
        PARAMS,
      );
    },
    TIMEOUT,
  );
});
