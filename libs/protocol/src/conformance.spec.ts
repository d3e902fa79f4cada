import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFORMANCE_SUITE, ConformanceScenarioSchema, resolveTimeRef } from './conformance';
import { RUNTIME_DEFAULTS } from './limits';

const dir = join(__dirname, '..', 'conformance');
const doc = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'protocol', 'v2.md'), 'utf8');

describe('conformance suite data', () => {
  it('plays every scenario file in libs/protocol/conformance, and each is valid', () => {
    const files = readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'checks.json');
    const ids = files.map((f) => ConformanceScenarioSchema.parse(JSON.parse(readFileSync(join(dir, f), 'utf8'))).id).sort();
    expect(CONFORMANCE_SUITE.scenarios.map((s) => s.id).sort()).toEqual(ids);
    for (const f of files) expect(`${JSON.parse(readFileSync(join(dir, f), 'utf8')).id}.json`).toBe(f);
  });

  it('names only declared checks, and every check is asserted by some step', () => {
    const declared = new Set(CONFORMANCE_SUITE.checks.map((c) => c.id));
    expect(declared.size).toBe(CONFORMANCE_SUITE.checks.length);
    const used = new Set<string>();
    for (const s of CONFORMANCE_SUITE.scenarios) {
      for (const step of s.steps) if ('check' in step) used.add(step.check);
      for (const c of s.observe) used.add(c);
    }
    expect([...used].filter((c) => !declared.has(c))).toEqual([]);
    expect([...declared].filter((c) => !used.has(c))).toEqual([]);
  });

  it('links each check to a section of the spec that exists', () => {
    const slugs = new Set(
      [...doc.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
        (m[1] as string)
          .toLowerCase()
          .replace(/[^\p{L}\p{N} _-]/gu, '')
          .replace(/ /g, '-'),
      ),
    );
    expect(CONFORMANCE_SUITE.checks.filter((c) => !slugs.has(c.section)).map((c) => c.section)).toEqual([]);
  });

  it('is listed check by check in section 14 of the spec, which links the suite as normative', () => {
    const section = doc.slice(doc.indexOf('## 14. Conformance'), doc.indexOf('## What this document settles'));
    const listed = [...section.matchAll(/^\| `([a-z0-9.-]+)` \|/gm)].map((m) => m[1]);
    expect(listed).toEqual(['installer.package', ...CONFORMANCE_SUITE.checks.map((c) => c.id)]);
    expect(doc).toContain('[`libs/protocol/conformance`](../../libs/protocol/conformance) is the normative check');
  });

  it('takes time bounds from the named limits, never from copied numbers', () => {
    expect(resolveTimeRef('RUNTIME_DEFAULTS.pingTimeoutMilliseconds', {})).toBe(RUNTIME_DEFAULTS.pingTimeoutMilliseconds);
    expect(resolveTimeRef('plugin.handlerDeadlineMilliseconds', {})).toBe(RUNTIME_DEFAULTS.handlerDeadlineMilliseconds);
    expect(resolveTimeRef('plugin.handlerDeadlineMilliseconds', { handlerDeadlineMilliseconds: 1500 })).toBe(1500);
    expect(() => resolveTimeRef('RUNTIME_DEFAULTS.nothing', {})).toThrow('unknown time bound');
    const raw = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => readFileSync(join(dir, f), 'utf8'))
      .join('\n');
    expect(raw).not.toMatch(/"(within|grace)":\s*\d/);
  });
});
