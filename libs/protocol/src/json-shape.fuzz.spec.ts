/**
 * Property-based fuzzing of the JSON shape check every entry point runs before
 * it accepts a document: on any text, it refuses exactly what a walk of the
 * parsed value finds too deep or too wide. Runs per property come from
 * FUZZ_RUNS, FUZZ_SEED replays one run; every input that ever broke something
 * is kept in fuzz-regressions/json-shape.json and replayed first (README, "Fuzzing").
 */
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkJsonShape, EVENT_JSON_SHAPE_LIMITS, type JsonShapeLimits } from './json-shape';

const RUNS = Number(process.env['FUZZ_RUNS']) || Number(process.env['FUZZ_LONG_RUNS']) || 200;
const PARAMS = { numRuns: RUNS, ...(process.env['FUZZ_SEED'] ? { seed: Number(process.env['FUZZ_SEED']) } : {}) };
const TIMEOUT = 60_000 + RUNS * 20;

/** Depth and widest container of a parsed value, walked without recursion. */
function measure(value: unknown): { depth: number; entries: number } {
  let depth = 0;
  let entries = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    const children = Array.isArray(v) ? v : Object.values(v);
    depth = Math.max(depth, d + 1);
    entries = Math.max(entries, Array.isArray(v) ? v.length : Object.keys(v).length);
    for (const c of children) stack.push([c, d + 1]);
  }
  return { depth, entries };
}

/** The check agrees with the parsed value: refused exactly when it is too deep or too wide. */
function checkAgainstParse(text: string, limits: JsonShapeLimits): void {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return; // not JSON: the parser refuses it whatever the check says
  }
  const { depth, entries } = measure(value);
  // JSON.parse keeps the last of duplicate keys, so the text may have more entries than the value: compare on the value's side only.
  const violation = checkJsonShape(text, limits);
  const bytes = checkJsonShape(new TextEncoder().encode(text), limits);
  expect(bytes?.kind ?? null).toBe(violation?.kind ?? null);
  // Too deep is refused; when the text is too wide as well, as whichever limit its walk meets first.
  if (depth > limits.maxDepth) expect(violation).not.toBeNull();
  else if (entries > limits.maxEntries) expect(violation).not.toBeNull();
  else if (violation?.kind === 'depth') throw new Error(`refused as too deep at depth ${depth}`);
  if (violation === null) {
    expect(depth).toBeLessThanOrEqual(limits.maxDepth);
    expect(entries).toBeLessThanOrEqual(limits.maxEntries);
  }
}

const regressions = JSON.parse(readFileSync(join(__dirname, '../fuzz-regressions/json-shape.json'), 'utf8')) as {
  cases: { name: string; input: string }[];
};

/** Small limits so generated values reach them. */
const SMALL: JsonShapeLimits = { maxDepth: 4, maxEntries: 5 };

/** JSON text with nesting, strings full of brackets, quotes and escapes, and whitespace. */
const tricky = fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', '\\', ',', ':', ' ', 'a', '1') });
const textArb = fc.oneof(
  fc.jsonValue({ maxDepth: 7 }).map((v) => JSON.stringify(v)),
  fc.jsonValue({ maxDepth: 7 }).map((v) => JSON.stringify(v, null, 1)),
  fc.array(tricky, { maxLength: 8 }).map((strings) => JSON.stringify(strings)),
  fc.nat({ max: 12 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
  tricky,
);

describe('checkJsonShape (fuzz)', () => {
  it.each(regressions.cases.map((c) => [c.name, c.input] as const))('regression: %s', (_name, input) => {
    checkAgainstParse(input, EVENT_JSON_SHAPE_LIMITS);
    checkAgainstParse(input, SMALL);
  });

  it(
    'refuses exactly the documents whose parsed value is too deep, and nothing within the limits, as text and as bytes',
    () => {
      fc.assert(
        fc.property(textArb, (text) => checkAgainstParse(text, SMALL)),
        PARAMS,
      );
    },
    TIMEOUT,
  );
});
