/**
 * Property-based fuzzing of settings validation: for any declared schema
 * (that passes manifest validation) and any change request,
 * applySettingsChanges returns values that fit the schema or throws
 * SETTINGS_INVALID with catalogued issue codes, and never anything else;
 * publicSettings never shows a secret. FUZZ_RUNS / FUZZ_SEED as in
 * libs/protocol/src/framing.fuzz.spec.ts; kept counterexamples are in
 * fuzz-regressions/settings.json.
 */
import { HostError, type PluginRecord } from '@host/host-core';
import { FIELD_ISSUE_ERRORS, parseStdioManifest } from '@host/protocol';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { applySettingsChanges, effectiveSettings, publicSettings } from './settings';

const RUNS = Number(process.env['FUZZ_RUNS']) || Number(process.env['FUZZ_LONG_RUNS']) || 200;
const PARAMS = { numRuns: RUNS, ...(process.env['FUZZ_SEED'] ? { seed: Number(process.env['FUZZ_SEED']) } : {}) };
const TIMEOUT = 60_000 + RUNS * 20;

interface Case {
  configSchema: Record<string, unknown>;
  current: Record<string, unknown>;
  changes: Record<string, unknown>;
}

const KEYS = ['greeting', 'count', 'enabled', 'mode', 'dir', 'token', 'constructor', 'toString', '__proto__', 'hasOwnProperty'];
const key = fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 8 }));
const value = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('', ' ', '\u0000', 'a', 'b', NaN, Infinity, -Infinity, -0, 1e308),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
);
const field = fc.record(
  {
    type: fc.constantFrom('string', 'number', 'boolean', 'select', 'path', 'secret'),
    label: fc.constantFrom('Label', 'x'),
    required: fc.boolean(),
    defaultValue: fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean()),
    options: fc.array(fc.record({ value: fc.constantFrom('a', 'b', '', 'toString') }), { maxLength: 3 }),
    min: fc.integer({ min: -5, max: 10 }),
    max: fc.integer({ min: -5, max: 10 }),
  },
  { requiredKeys: ['type', 'label'] },
);
/** Objects built with defineProperty, so "__proto__" becomes an own key as it does in JSON.parse. */
function dict<T>(k: fc.Arbitrary<string>, v: fc.Arbitrary<T>, maxLength: number): fc.Arbitrary<Record<string, T>> {
  return fc.array(fc.tuple(k, v), { maxLength }).map((pairs) => {
    const out: Record<string, T> = {};
    for (const [kk, vv] of pairs) Object.defineProperty(out, kk, { value: vv, enumerable: true, configurable: true, writable: true });
    return out;
  });
}
const caseArb: fc.Arbitrary<Case> = fc.record({
  configSchema: dict(fc.constantFrom(...KEYS.slice(0, 6), 'Other.key-1'), field, 5),
  current: dict(key, value, 4),
  changes: dict(key, fc.oneof(value, fc.jsonValue()), 6),
});

const ISSUE_CODES = new Set(Object.keys(FIELD_ISSUE_ERRORS));

function recordOf(configSchema: Record<string, unknown>): PluginRecord | undefined {
  const parsed = parseStdioManifest({
    pluginId: 'com.example.settings',
    name: 'Settings',
    version: '1.0.0',
    author: 'Example',
    protocolVersion: 2,
    transport: { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['index.js', '--host-stdio'] } },
    eventSubscriptions: [{ eventType: 'message.created' }],
    settings: { configSchema },
  });
  if (!parsed.ok) return undefined;
  const now = new Date(0).toISOString();
  return {
    pluginId: parsed.value.pluginId,
    transport: 'stdio-jsonrpc',
    manifest: parsed.value,
    packageSha256: '0'.repeat(64),
    installedAt: now,
    updatedAt: now,
    enabled: true,
  } as PluginRecord;
}

function checkCase(c: Case): void {
  const record = recordOf(c.configSchema);
  if (!record) return;
  const schema = record.manifest.settings?.configSchema ?? {};
  const current = c.current as Record<string, string | number | boolean>;
  const shown = publicSettings(record, current);
  for (const [k, f] of Object.entries(schema)) if (f.type === 'secret') expect(shown[k]).toEqual({ set: expect.any(Boolean) });
  effectiveSettings(record, current);
  let next: Record<string, unknown>;
  try {
    next = applySettingsChanges(record, current, c.changes as Record<string, string | number | boolean | null>);
  } catch (e) {
    if (!(e instanceof HostError) || e.code !== 'SETTINGS_INVALID') throw e;
    const issues = (e.details as unknown as { issues: { code: string; path: string }[] }).issues;
    expect(issues.length).toBeGreaterThan(0);
    for (const i of issues) expect(ISSUE_CODES.has(i.code) ? i.code : `uncatalogued ${i.code}`).toBe(i.code);
    return;
  }
  // Accepted values are declared, own keys of the schema, of the declared type.
  for (const [k, v] of Object.entries(next)) {
    expect(Object.hasOwn(schema, k)).toBe(true);
    const t = schema[k]!.type;
    expect(typeof v).toBe(t === 'number' ? 'number' : t === 'boolean' ? 'boolean' : 'string');
    if (typeof v === 'number' && Object.hasOwn(c.changes, k) && c.changes[k] === v) expect(Number.isFinite(v)).toBe(true);
  }
  // Saving again without changes keeps the same values.
  expect(applySettingsChanges(record, next as Record<string, string | number | boolean>, {})).toEqual(next);
}

const regressions = JSON.parse(readFileSync(join(__dirname, '../fuzz-regressions/settings.json'), 'utf8')) as {
  cases: { name: string; input: Case }[];
};

describe('settings validation (fuzz)', () => {
  it.each(regressions.cases.map((c) => [c.name, c.input] as const))('regression: %s', (_name, input) => checkCase(input));

  it(
    'returns valid values or throws SETTINGS_INVALID with catalogued issues, never anything else',
    () => {
      fc.assert(fc.property(caseArb, checkCase), PARAMS);
    },
    TIMEOUT,
  );
});
