import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

// Module boundaries are lint rules (eslint.config.mjs). These tests lint
// in-memory files placed inside real libraries and check that a forbidden
// import is an error. Each forbidden import is paired with a control: the same
// file importing something allowed lints clean, so a test cannot pass just
// because linting is broken or reports everything.

const ROOT = join(__dirname, '..', '..', '..');

interface Lib {
  folder: string;
  importPath: string;
  tags: string[];
}

function readLibs(): Lib[] {
  const libsDir = join(ROOT, 'libs');
  return readdirSync(libsDir)
    .filter((folder) => existsSync(join(libsDir, folder, 'project.json')) && existsSync(join(libsDir, folder, 'package.json')))
    .map((folder) => ({
      folder,
      importPath: (JSON.parse(readFileSync(join(libsDir, folder, 'package.json'), 'utf8')) as { name: string }).name,
      tags: (JSON.parse(readFileSync(join(libsDir, folder, 'project.json'), 'utf8')) as { tags?: string[] }).tags ?? [],
    }));
}

interface Probe {
  name: string;
  filePath: string;
  code: string;
  /** The rule that must report an error, or null when the file must lint clean. */
  expectRule: string | null;
}

interface LintMessage {
  ruleId: string | null;
  severity: number;
  message: string;
}

/** Lints every probe in one ESLint process (see lint-probe.mjs for why a process). */
function lint(probes: Probe[]): LintMessage[][] {
  const r = spawnSync(process.execPath, [join(__dirname, 'lint-probe.mjs')], {
    cwd: ROOT,
    input: JSON.stringify(probes.map(({ filePath, code }) => ({ filePath, code }))),
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`lint-probe.mjs failed (exit ${r.status}): ${r.stderr}`);
  return (JSON.parse(r.stdout) as { messages: LintMessage[] }[]).map((x) => x.messages);
}

function importing(module: string, name: string): string {
  return `import { ${name} } from '${module}';\n\nexport const probe = ${name};\n`;
}

const BOUNDARIES = '@nx/enforce-module-boundaries';
const NO_NODE = 'no-restricted-imports';
const RESTRICTED = 'no-restricted-imports';

const libs = readLibs();
const browserLibs = libs.filter((l) => l.tags.includes('platform:browser'));
const hostLib = libs.find((l) => l.folder === 'host-core') ?? libs.find((l) => l.tags.includes('scope:host'));
const nodeLib = libs.find((l) => l.tags.includes('platform:node'));

function buildProbes(): Probe[] {
  if (!hostLib || !nodeLib) throw new Error('expected at least one scope:host, platform:node library (libs/host-core)');
  const probes: Probe[] = [];
  for (const lib of browserLibs) {
    const file = `libs/${lib.folder}/src/boundary-probe.ts`;
    // protocol may use no library of ours, only npm packages; the others may use protocol.
    const allowed = lib.tags.includes('scope:protocol') ? importing('zod', 'z') : importing('@host/protocol', 'LIMITS');
    probes.push(
      { name: `${lib.folder}: control, an allowed import`, filePath: file, code: allowed, expectRule: null },
      { name: `${lib.folder}: node:fs`, filePath: file, code: importing('node:fs', 'readFileSync'), expectRule: NO_NODE },
      { name: `${lib.folder}: bare fs`, filePath: file, code: importing('fs', 'readFileSync'), expectRule: NO_NODE },
      { name: `${lib.folder}: fs/promises`, filePath: file, code: importing('fs/promises', 'readFile'), expectRule: NO_NODE },
      { name: `${lib.folder}: node:crypto`, filePath: file, code: importing('node:crypto', 'createHmac'), expectRule: NO_NODE },
      { name: `${lib.folder}: a scope:host lib`, filePath: file, code: importing(hostLib.importPath, 'HostError'), expectRule: BOUNDARIES },
      // protocol is browser-safe, its Node entry point is not: the tag check cannot tell them apart.
      {
        name: `${lib.folder}: @host/protocol/node`,
        filePath: file,
        code: importing('@host/protocol/node', 'packagePath'),
        expectRule: NO_NODE,
      },
      // Specs run in Node only, so they may use Node built-ins.
      {
        name: `${lib.folder}: control, a spec file may use node:fs`,
        filePath: `libs/${lib.folder}/src/boundary-probe.spec.ts`,
        code: importing('node:fs', 'readFileSync'),
        expectRule: null,
      },
    );
  }
  probes.push(
    // The built-in rule is scoped to browser libs: a Node lib may use node:fs.
    {
      name: `${nodeLib.folder} (platform:node): control, node:fs`,
      filePath: `libs/${nodeLib.folder}/src/boundary-probe.ts`,
      code: importing('node:fs', 'readFileSync'),
      expectRule: null,
    },
    // Node code may use the protocol's Node entry point.
    {
      name: `${nodeLib.folder} (platform:node): control, @host/protocol/node`,
      filePath: `libs/${nodeLib.folder}/src/boundary-probe.ts`,
      code: importing('@host/protocol/node', 'packagePath'),
      expectRule: null,
    },
    // Dependencies point one way: host code may use protocol, never the reverse.
    {
      name: `${hostLib.folder}: control, uses protocol`,
      filePath: `libs/${hostLib.folder}/src/boundary-probe.ts`,
      code: importing('@host/protocol', 'LIMITS'),
      expectRule: null,
    },
  );
  // Layers (type: tags): a library may import its own layer and those below, never one above.
  const byLayer = (layer: string) => libs.find((l) => l.tags.includes(`type:${layer}`));
  const [data, engine, api] = [byLayer('data'), byLayer('engine'), byLayer('api')];
  if (!data || !engine || !api) throw new Error('expected libraries tagged type:data, type:engine and type:api');
  probes.push(
    {
      name: `${data.folder} (type:data): an engine library`,
      filePath: `libs/${data.folder}/src/boundary-probe.ts`,
      code: importing(engine.importPath, 'probe'),
      expectRule: BOUNDARIES,
    },
    {
      name: `${engine.folder} (type:engine): the admin API`,
      filePath: `libs/${engine.folder}/src/boundary-probe.ts`,
      code: importing(api.importPath, 'probe'),
      expectRule: BOUNDARIES,
    },
    {
      name: `${data.folder} (type:data): control, a contract`,
      filePath: `libs/${data.folder}/src/boundary-probe.ts`,
      code: importing('@host/host-core', 'HostError'),
      expectRule: null,
    },
  );
  // host-core is a leaf of contracts (hostCoreImportRules): @host/protocol and nothing else of ours, no web framework.
  const core = 'libs/host-core/src/boundary-probe.ts';
  probes.push(
    { name: 'host-core: express', filePath: core, code: importing('express', 'Router'), expectRule: RESTRICTED },
    {
      name: 'host-core: the admin API contract',
      filePath: core,
      code: importing('@host/admin-api', 'ADMIN_ROUTES'),
      expectRule: RESTRICTED,
    },
    {
      name: 'host-core: another contract (messages)',
      filePath: core,
      code: importing('@host/messages', 'defaultRegistry'),
      expectRule: RESTRICTED,
    },
    {
      name: 'host-core: the file helpers (host-fs)',
      filePath: core,
      code: importing('@host/host-fs', 'writeJsonAtomic'),
      expectRule: RESTRICTED,
    },
    {
      name: 'host-core: a store (host-store)',
      filePath: core,
      code: importing('@host/host-store', 'JsonRegistryStore'),
      expectRule: RESTRICTED,
    },
    {
      name: 'host-core: control, @host/protocol/node',
      filePath: core,
      code: importing('@host/protocol/node', 'packagePath'),
      expectRule: null,
    },
    {
      name: "host-core: control, the host's error codes (host-errors)",
      filePath: core,
      code: importing('@host/host-errors', 'HOST_ERROR_CATALOG'),
      expectRule: null,
    },
  );
  // The host's own error codes (owner:host) reach the host and the admin app, never an SDK's public API.
  probes.push(
    {
      name: "plugin-sdk (scope:sdk): the host's error codes",
      filePath: 'libs/plugin-sdk/src/boundary-probe.ts',
      code: importing('@host/host-errors', 'HOST_ERROR_CATALOG'),
      expectRule: BOUNDARIES,
    },
    {
      name: 'plugin-sdk (scope:sdk): control, the wire catalogue',
      filePath: 'libs/plugin-sdk/src/boundary-probe.ts',
      code: importing('@host/protocol', 'ERROR_CATALOG'),
      expectRule: null,
    },
    {
      name: "admin-api (scope:shared): control, the host's error codes",
      filePath: 'libs/admin-api/src/boundary-probe.ts',
      code: importing('@host/host-errors', 'HOST_ERROR_CATALOG'),
      expectRule: null,
    },
  );
  return probes;
}

describe('module boundaries', () => {
  const probes = buildProbes();
  let results: LintMessage[][] = [];
  beforeAll(() => {
    results = lint(probes);
  }, 120_000);

  it('finds the browser-safe libraries by tag, protocol among them', () => {
    expect(browserLibs.map((l) => l.folder)).toContain('protocol');
  });

  it('lints every probe', () => {
    expect(results).toHaveLength(probes.length);
  });

  it('protocol may not import host code', () => {
    const i = probes.findIndex((p) => p.filePath.startsWith('libs/protocol/src/') && p.expectRule === BOUNDARIES);
    expect(results[i]?.map((m) => m.ruleId)).toContain(BOUNDARIES);
  });

  it.each(probes.map((p, i) => [p.name, i] as const))('%s', (_name, i) => {
    const probe = probes[i] as Probe;
    const messages = results[i] ?? [];
    if (probe.expectRule === null) {
      expect(messages).toEqual([]);
    } else {
      const errors = messages.filter((m) => m.severity === 2);
      expect(errors.map((m) => m.ruleId)).toContain(probe.expectRule);
    }
  });
});
