import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

// The browser-import rules (no Node built-ins, no @host/protocol/node) apply
// to every project tagged platform:browser, applications included: the admin
// app will live in apps/. eslint.config.mjs finds those projects from their
// project.json tags; browser-rule-probe.mjs runs that on a throwaway workspace
// and lints in-memory files with the resulting rules.

const ROOT = join(__dirname, '..', '..', '..');

interface LintMessage {
  ruleId: string | null;
  severity: number;
}

const projects = [
  { path: 'libs/shared-ui', tags: ['scope:shared', 'platform:browser'] },
  { path: 'libs/server-core', tags: ['scope:host', 'platform:node'] },
  { path: 'apps/admin', tags: ['scope:admin', 'platform:browser'] },
  { path: 'apps/server', tags: ['scope:host', 'platform:node'] },
];

const probes = [
  {
    name: 'browser app: node:fs',
    filePath: 'apps/admin/src/main.ts',
    code: "import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n",
    error: true,
  },
  {
    name: 'browser app: bare path',
    filePath: 'apps/admin/src/main.ts',
    code: "import { join } from 'path';\nexport const x = join;\n",
    error: true,
  },
  {
    name: 'browser app: @host/protocol/node',
    filePath: 'apps/admin/src/main.tsx',
    code: "import { packagePath } from '@host/protocol/node';\nexport const x = packagePath;\n",
    error: true,
  },
  {
    name: 'browser app: control, @host/protocol',
    filePath: 'apps/admin/src/main.ts',
    code: "import { LIMITS } from '@host/protocol';\nexport const x = LIMITS;\n",
    error: false,
  },
  {
    name: 'browser app: control, a spec may use node:fs',
    filePath: 'apps/admin/src/main.spec.ts',
    code: "import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n",
    error: false,
  },
  {
    name: 'browser lib: control, a spec helper may use node:fs',
    filePath: 'libs/shared-ui/src/vectors.spec-helper.ts',
    code: "import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n",
    error: false,
  },
  {
    name: 'browser lib: @host/protocol/node',
    filePath: 'libs/shared-ui/src/a.ts',
    code: "import { packagePath } from '@host/protocol/node';\nexport const x = packagePath;\n",
    error: true,
  },
  {
    name: 'node app: control, node:fs',
    filePath: 'apps/server/src/main.ts',
    code: "import { readFileSync } from 'node:fs';\nexport const x = readFileSync;\n",
    error: false,
  },
  {
    name: 'node lib: control, @host/protocol/node',
    filePath: 'libs/server-core/src/a.ts',
    code: "import { packagePath } from '@host/protocol/node';\nexport const x = packagePath;\n",
    error: false,
  },
];

function run(): { sources: string[]; results: { filePath: string; messages: LintMessage[] }[] } {
  const r = spawnSync(process.execPath, [join(__dirname, 'browser-rule-probe.mjs')], {
    cwd: ROOT,
    input: JSON.stringify({ projects, probes: probes.map(({ filePath, code }) => ({ filePath, code })) }),
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`browser-rule-probe.mjs failed (exit ${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

describe('browser-import rules over libs/ and apps/', () => {
  let out: ReturnType<typeof run>;
  beforeAll(() => {
    out = run();
  }, 120_000);

  it('cover the sources of every platform:browser project, applications included, and no other', () => {
    expect(out.sources.sort()).toEqual(['apps/admin/src/**/*.{ts,tsx}', 'libs/shared-ui/src/**/*.{ts,tsx}']);
  });

  it.each(probes.map((p, i) => [p.name, i] as const))('%s', (_name, i) => {
    const errors = (out.results[i]?.messages ?? []).filter((m) => m.severity === 2).map((m) => m.ruleId);
    if (probes[i]!.error) expect(errors).toContain('no-restricted-imports');
    else expect(errors).toEqual([]);
  });
});
