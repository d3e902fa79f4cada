import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

// Test-only code has one naming convention (README.md, "Test helpers"), of three kinds:
//   <project>/src/testing/    a public test kit, exported as the package's `/testing` subpath
//   <project>/test-fixtures/  static files tests read or run (e2e/test-fixtures: the ones the e2e suites share)
//   *.spec-helper.ts          private helpers of one project's specs, in its src/ beside them
// Any other test-helper name, or one of these three in another place, fails here with its path.

const ROOT = join(__dirname, '..', '..', '..');

const CONVENTION =
  'test code comes in three kinds (README.md, "Test helpers"): <project>/src/testing/ is a public test kit exported as ' +
  "the package's /testing subpath; <project>/test-fixtures/ (or e2e/test-fixtures/) holds static files tests read; " +
  '*.spec-helper.ts in src/ beside the specs is a private helper of that project';

/** The folders walked, and the folders never entered (build output, caches, installs, run data). */
const GROUPS = ['apps', 'libs', 'tools', 'examples', 'e2e'];
const SKIP = new Set(['node_modules', 'dist', '.nx', 'coverage', 'tmp', 'data', 'artifacts', 'bin', 'obj', '__pycache__', 'vendor']);

/** Projects in another language keep that language's layout. */
const OTHER_LANGUAGES: Record<string, string> = {
  'libs/plugin-sdk-python': 'Python: tests/, with tests/fixtures/',
  'libs/plugin-sdk-go': 'Go: *_test.go, testdata/ and the hostsdktest package',
  'libs/plugin-sdk-csharp': 'C#: the HostSdk.Testing namespace',
};

/** Folder names that mean test-only code and are not one of the three kinds. */
const OTHER_FOLDER = /^(__[a-z-]+__|fixtures?|test-?(support|utils?|helpers?|data|kit)|spec-?(support|utils?|helpers?)|mocks?|stubs?)$/i;
/** File names that mean test-only code and are not `*.spec-helper.ts`. */
const OTHER_FILE = /(^|[.-])(test|spec)[-_.]?(support|utils?|helpers?)\.[cm]?[jt]sx?$|\.fixtures?\.[cm]?[jt]sx?$/i;

interface Tree {
  /** Every file and folder, relative to the workspace root with "/" separators; folders end in "/". */
  paths: string[];
  /** Project roots (folders with a project.json). */
  projects: Set<string>;
  /** Public test kits: each `<alias>/testing` path of tsconfig.base.json, by the folder its index.ts is in. */
  kits: Map<string, string>;
  /** Package names and `exports` keys, by project root. */
  packages: Map<string, { name?: string; exports?: string[] }>;
}

function projectOf(path: string, projects: Set<string>): string | undefined {
  const parts = path.split('/');
  for (let i = parts.length - 1; i > 0; i--) {
    const root = parts.slice(0, i).join('/');
    if (projects.has(root)) return root;
  }
  return undefined;
}

/** What breaks the convention, one line per path: the path, what is wrong, and the convention. */
function offenses(tree: Tree): string[] {
  const found: string[] = [];
  const fail = (path: string, what: string) => found.push(`${path}: ${what}; ${CONVENTION}`);
  const checkedKits = new Set<string>();
  for (const entry of tree.paths) {
    const folder = entry.endsWith('/');
    const path = folder ? entry.slice(0, -1) : entry;
    const name = posix.basename(path);
    const project = projectOf(path, tree.projects);
    if (folder && name === 'testing') {
      const alias = tree.kits.get(path);
      const pkg = project === undefined ? undefined : tree.packages.get(project);
      if (project === undefined || path !== `${project}/src/testing`) fail(path, 'a testing folder outside <project>/src/testing');
      else if (alias === undefined) fail(path, 'a test kit with no "<package>/testing" path in tsconfig.base.json for its index.ts');
      else if (alias !== `${pkg?.name}/testing`) fail(path, `a test kit whose alias ${alias} is not ${pkg?.name}/testing`);
      else if (pkg?.exports && !pkg.exports.includes('./testing'))
        fail(path, 'a test kit that package.json "exports" does not export as ./testing');
      checkedKits.add(path);
    } else if (folder && name === 'test-fixtures') {
      if (!(project !== undefined && path === `${project}/test-fixtures`) && path !== 'e2e/test-fixtures')
        fail(path, 'a test-fixtures folder that is not at a project root');
    } else if (folder && OTHER_FOLDER.test(name)) {
      fail(path, 'a test-helper folder name outside the convention');
    } else if (!folder && name.endsWith('.spec-helper.ts')) {
      if (project === undefined || !path.startsWith(`${project}/src/`)) fail(path, "a spec helper outside its project's src/");
    } else if (!folder && OTHER_FILE.test(name)) {
      fail(path, 'a test-helper file name outside the convention');
    }
  }
  for (const [kit, alias] of tree.kits) {
    if (!checkedKits.has(kit))
      fail(kit, `the folder of the ${alias} path in tsconfig.base.json, which is not a <project>/src/testing folder`);
  }
  return found;
}

/** The `*.spec-helper` modules a source imports, as written. */
function specHelperImports(source: string): string[] {
  return [...source.matchAll(/(?:from\s+|import\s*\(\s*|require\s*\(\s*)['"]([^'"]*\.spec-helper)(?:\.ts)?['"]/g)].map((m) => m[1]!);
}

/** Spec helpers are private: only specs and other spec helpers of their own project import them. */
function privacyOffenses(files: { path: string; source: string }[], projects: Set<string>): string[] {
  const found: string[] = [];
  for (const { path, source } of files) {
    for (const spec of specHelperImports(source)) {
      const target = posix.normalize(posix.join(posix.dirname(path), spec));
      if (!/\.spec(-helper)?\.tsx?$/.test(path))
        found.push(`${path}: imports ${spec}, a spec helper, from code that is not a spec; ${CONVENTION}`);
      else if (!spec.startsWith('.') || projectOf(target, projects) !== projectOf(path, projects))
        found.push(
          `${path}: imports ${spec}, a spec helper of another project (export it from that project's src/testing instead); ${CONVENTION}`,
        );
    }
  }
  return found;
}

function walk(dir: string, into: string[]): string[] {
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    if (SKIP.has(entry.name) || entry.name.startsWith('.')) continue;
    const path = `${dir}/${entry.name}`;
    if (path in OTHER_LANGUAGES) continue;
    if (entry.isDirectory()) {
      into.push(`${path}/`);
      // A fixture's insides are data, laid out as the test that reads them needs.
      if (entry.name !== 'test-fixtures') walk(path, into);
    } else {
      into.push(path);
    }
  }
  return into;
}

function workspace(): Tree {
  const paths = GROUPS.flatMap((group) => walk(group, []));
  const projects = new Set(paths.filter((p) => p.endsWith('/project.json')).map((p) => posix.dirname(p)));
  const packages = new Map<string, { name?: string; exports?: string[] }>();
  for (const project of projects) {
    const file = join(ROOT, project, 'package.json');
    if (!existsSync(file)) continue;
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; exports?: Record<string, unknown> };
    packages.set(project, { name: manifest.name, exports: manifest.exports ? Object.keys(manifest.exports) : undefined });
  }
  const aliases = (
    JSON.parse(readFileSync(join(ROOT, 'tsconfig.base.json'), 'utf8')) as { compilerOptions: { paths: Record<string, string[]> } }
  ).compilerOptions.paths;
  const kits = new Map(
    Object.entries(aliases)
      .filter(([alias]) => alias.endsWith('/testing'))
      .map(([alias, targets]) => [posix.dirname(targets[0]!), alias] as const),
  );
  return { paths, projects, kits, packages };
}

const tree = workspace();

it('walks the workspace and finds its test kits, fixtures and spec helpers', () => {
  expect(tree.paths.length).toBeGreaterThan(500);
  expect(tree.paths).toEqual(
    expect.arrayContaining([
      'libs/plugin-sdk/src/testing/',
      'libs/host-runtime/test-fixtures/',
      'e2e/test-fixtures/',
      'apps/host/src/console.spec-helper.ts',
    ]),
  );
  expect(tree.kits.get('libs/plugin-sdk/src/testing')).toBe('@host/plugin-sdk-v2/testing');
  // The projects left to their language's layout are still there.
  for (const project of Object.keys(OTHER_LANGUAGES))
    expect({ project, exists: existsSync(join(ROOT, project, 'project.json')) }).toEqual({ project, exists: true });
});

it('names test-only code in one of the three kinds', () => {
  expect(offenses(tree)).toEqual([]);
});

it('keeps spec helpers private to their own project', () => {
  const files = tree.paths
    .filter((p) => /\.[cm]?[jt]sx?$/.test(p))
    .map((path) => ({ path, source: readFileSync(join(ROOT, path), 'utf8') }));
  expect(files.filter((f) => specHelperImports(f.source).length > 0).length).toBeGreaterThan(10);
  expect(privacyOffenses(files, tree.projects)).toEqual([]);
});

describe('fails', () => {
  const projects = new Set(['libs/a', 'libs/b', 'e2e/c']);
  const kits = new Map([['libs/a/src/testing', '@host/a/testing']]);
  const packages = new Map([
    ['libs/a', { name: '@host/a', exports: ['.', './testing'] }],
    ['libs/b', { name: '@host/b' }],
  ]);
  /** The offenses without the convention's wording that ends each line. */
  const check = (...paths: string[]) => offenses({ paths, projects, kits, packages }).map((line) => line.slice(0, line.indexOf(';')));
  const good = [
    'libs/a/src/testing/',
    'libs/a/test-fixtures/',
    'e2e/test-fixtures/',
    'e2e/c/test-fixtures/',
    'libs/b/src/x/y.spec-helper.ts',
    'libs/b/src/fixture-records.spec-helper.ts',
  ];

  it('on nothing that follows the convention', () => {
    expect(check(...good)).toEqual([]);
  });

  it.each([
    ['libs/b/src/__fixtures__/', 'a test-helper folder name outside the convention'],
    ['libs/b/test-support/', 'a test-helper folder name outside the convention'],
    ['e2e/c/fixtures/', 'a test-helper folder name outside the convention'],
    ['libs/b/src/__mocks__/', 'a test-helper folder name outside the convention'],
    ['libs/b/src/test-utils/', 'a test-helper folder name outside the convention'],
    ['libs/b/src/test-utils.ts', 'a test-helper file name outside the convention'],
    ['libs/b/src/dispatch.test-helper.ts', 'a test-helper file name outside the convention'],
    ['libs/b/src/dispatch.spec-helpers.ts', 'a test-helper file name outside the convention'],
    ['libs/b/src/events.fixture.ts', 'a test-helper file name outside the convention'],
    ['libs/b/test/run.spec-helper.ts', "a spec helper outside its project's src/"],
    ['tools/scripts/run.spec-helper.ts', "a spec helper outside its project's src/"],
    ['libs/b/src/lib/test-fixtures/', 'a test-fixtures folder that is not at a project root'],
    ['libs/b/testing/', 'a testing folder outside <project>/src/testing'],
    ['libs/b/src/testing/', 'a test kit with no "<package>/testing" path in tsconfig.base.json for its index.ts'],
  ])('on %s', (path, what) => {
    expect(check(...good, path)).toEqual([`${path.replace(/\/$/, '')}: ${what}`]);
  });

  it('on a test kit the package does not export', () => {
    const unexported = new Map([...packages, ['libs/a', { name: '@host/a', exports: ['.'] }]]);
    expect(offenses({ paths: good, projects, kits, packages: unexported })).toEqual([
      `libs/a/src/testing: a test kit that package.json "exports" does not export as ./testing; ${CONVENTION}`,
    ]);
  });

  it('on a spec helper that production code or another project imports', () => {
    // Written as a call so that this file's own text imports no spec helper.
    const importing = (path: string, spec: string) => ({ path, source: `import { h } from '${spec}';` });
    const files = [
      importing('libs/b/src/x.spec.ts', './x.spec-helper'),
      importing('libs/b/src/y.spec-helper.ts', './x.spec-helper'),
      importing('libs/b/src/x.ts', './x.spec-helper'),
      importing('libs/a/src/z.spec.ts', '../../b/src/x.spec-helper'),
    ];
    expect(privacyOffenses(files, projects).map((line) => line.split(';')[0])).toEqual([
      'libs/b/src/x.ts: imports ./x.spec-helper, a spec helper, from code that is not a spec',
      "libs/a/src/z.spec.ts: imports ../../b/src/x.spec-helper, a spec helper of another project (export it from that project's src/testing instead)",
    ]);
  });
});
