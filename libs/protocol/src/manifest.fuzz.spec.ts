/**
 * Property-based fuzzing of the manifest validators (stdio and HTTP) and of
 * manifest text parsing: they never throw, and a refusal lists issues whose
 * codes are in the catalogue. FUZZ_RUNS / FUZZ_SEED as in framing.fuzz.spec.ts;
 * kept counterexamples are in fuzz-regressions/manifest.json.
 */
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIELD_ISSUE_ERRORS, MANIFEST_ERRORS } from './error-codes';
import { parseHttpManifest, parseManifestText, parseStdioManifest } from './parse';
import type { ValidationResult } from './validation';

const RUNS = Number(process.env['FUZZ_RUNS']) || Number(process.env['FUZZ_LONG_RUNS']) || 200;
const PARAMS = { numRuns: RUNS, ...(process.env['FUZZ_SEED'] ? { seed: Number(process.env['FUZZ_SEED']) } : {}) };
const TIMEOUT = 60_000 + RUNS * 20;
const CODES = new Set([...Object.keys(MANIFEST_ERRORS), ...Object.keys(FIELD_ISSUE_ERRORS)]);

const STDIO = {
  pluginId: 'com.example.echo',
  name: 'Echo',
  version: '1.0.0',
  author: 'Example',
  protocolVersion: 2,
  sdkVersion: '2.0.0',
  transport: { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['index.js', '--host-stdio'], workingDirectory: '.' } },
  supportedPlatforms: [{ platform: 'linux' }],
  eventSubscriptions: [{ eventType: 'message.created' }],
  permissions: ['messages.reply'],
  commands: [{ name: 'echo', prefixes: ['/'], priority: 0 }],
  concurrency: { maxConcurrentEvents: 4 },
  settings: { configSchema: { greeting: { type: 'string', label: 'Greeting', defaultValue: 'hi' } } },
};
const HTTP = {
  pluginId: 'com.example.http-echo',
  name: 'HTTP Echo',
  version: '1.0.0',
  author: 'Example',
  protocolVersion: 2,
  capabilities: 9,
  eventSubscriptions: [{ eventType: 'message.created' }],
  permissions: ['messages.reply'],
  commands: [{ name: 'echo', prefixes: ['/'], priority: 0 }],
};

/** Every path (object keys and array indexes) in a JSON value. */
function paths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  const out = [at];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...paths(v, [...at, i])));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...at, k]));
  return out;
}

/** A valid manifest with a few of its values replaced, removed or joined by odd keys. */
function mutated(base: object): fc.Arbitrary<unknown> {
  const all = paths(base).filter((p) => p.length > 0);
  const edit = fc.record({
    path: fc.constantFrom(...all),
    op: fc.constantFrom('set', 'delete', 'addKey'),
    key: fc.constantFrom('__proto__', 'constructor', 'toString', 'x', '', 'hasOwnProperty'),
    value: fc.oneof(
      fc.jsonValue(),
      fc.constantFrom('', ' ', '\u0000', 'a'.repeat(5000), -1, 0, 1e308, 2 ** 53, 1.5, 'http', 'stdio-jsonrpc', '../..'),
    ),
  });
  return fc.array(edit, { minLength: 1, maxLength: 4 }).map((edits) => {
    const doc = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
    for (const e of edits) {
      let parent: Record<string | number, unknown> = doc;
      for (const seg of e.path.slice(0, -1)) {
        const next = parent[seg];
        if (!next || typeof next !== 'object') break;
        parent = next as Record<string | number, unknown>;
      }
      const last = e.path[e.path.length - 1]!;
      if (e.op === 'delete') delete parent[last];
      else if (e.op === 'set') parent[last] = e.value;
      else Object.defineProperty(parent, e.key, { value: e.value, enumerable: true, configurable: true, writable: true });
    }
    return doc;
  });
}

function checkResult(r: ValidationResult<unknown>): void {
  if (r.ok) return;
  expect(r.issues.length).toBeGreaterThan(0);
  for (const i of r.issues) {
    expect(CODES.has(i.code) ? i.code : `uncatalogued ${i.code}`).toBe(i.code);
    expect(typeof i.path).toBe('string');
    expect(typeof i.message).toBe('string');
  }
}

function checkInput(input: unknown): void {
  checkResult(parseStdioManifest(input));
  checkResult(parseHttpManifest(input));
}

const regressions = JSON.parse(readFileSync(join(__dirname, '../fuzz-regressions/manifest.json'), 'utf8')) as {
  cases: { name: string; input?: unknown; text?: string }[];
};

describe('manifest validation (fuzz)', () => {
  it('accepts the base manifests the mutations start from', () => {
    expect(parseStdioManifest(STDIO).ok).toBe(true);
    expect(parseHttpManifest(HTTP).ok).toBe(true);
  });

  it.each(regressions.cases.map((c) => [c.name, c] as const))('regression: %s', (_name, c) => {
    if (c.text !== undefined) {
      const t = parseManifestText(c.text);
      if (t.ok) checkInput(t.value);
      else checkResult(t);
    } else checkInput(c.input);
  });

  it(
    'never throws on mutated manifests and names every issue with a catalogued code',
    () => {
      fc.assert(fc.property(fc.oneof(mutated(STDIO), mutated(HTTP)), checkInput), PARAMS);
    },
    TIMEOUT,
  );

  it(
    'never throws on arbitrary values, including objects without a prototype',
    () => {
      const value = fc.oneof(
        fc.jsonValue(),
        fc.anything({ withNullPrototype: true, withBoxedValues: true, withMap: true, withSet: true, withSparseArray: true }),
      );
      fc.assert(fc.property(value, checkInput), PARAMS);
    },
    TIMEOUT,
  );

  it(
    'parses any manifest text into a value or a manifest.json.invalid issue',
    () => {
      const text = fc.oneof(
        fc.string({ unit: 'binary' }),
        fc.json(),
        fc.json().map((t) => '\ufeff' + t),
        mutated(STDIO).map((v) => JSON.stringify(v)),
      );
      fc.assert(
        fc.property(text, (t) => {
          const r = parseManifestText(t);
          if (r.ok) checkInput(r.value);
          else expect(r.issues.map((i) => i.code)).toEqual(['manifest.json.invalid']);
        }),
        PARAMS,
      );
    },
    TIMEOUT,
  );
});
