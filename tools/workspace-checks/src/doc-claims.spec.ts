import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { satisfies } from 'semver';

// Facts the documentation states that the repository can check: paths inside
// installed packages, the Node.js versions packages require, and the host
// versions that examples name. A doc that drifts from the code fails here.

const ROOT = join(__dirname, '..', '..', '..');
const json = (path: string) => JSON.parse(readFileSync(join(ROOT, path), 'utf8'));

function markdownFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (['node_modules', 'dist', 'tmp', 'data', '.git', '.nx'].includes(name)) return [];
    if (statSync(join(ROOT, path)).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

const docs = ['README.md', ...['docs', 'libs', 'tools', 'apps', 'examples'].flatMap((d) => markdownFiles(d))].map((file) => ({
  file,
  text: readFileSync(join(ROOT, file), 'utf8'),
}));

/** Workspace packages by name: their folder and package.json. */
const packages = new Map<string, { dir: string; manifest: { files?: string[]; engines?: { node?: string }; version: string } }>();
for (const group of ['libs', 'tools', 'apps']) {
  for (const name of readdirSync(join(ROOT, group))) {
    const file = join(group, name, 'package.json');
    if (existsSync(join(ROOT, file))) {
      const manifest = json(file);
      packages.set(manifest.name, { dir: join(group, name), manifest });
    }
  }
}

it('finds the documentation', () => {
  expect(docs.length).toBeGreaterThan(10);
  expect(packages.has('@host/plugin-sdk-v2')).toBe(true);
});

it('names only files that installed packages ship', () => {
  const claims = docs.flatMap(({ file, text }) =>
    [...text.matchAll(/node_modules\/(@host\/[a-z0-9-]+)\/([A-Za-z0-9_./-]+)/g)].map((m) => ({ file, pkg: m[1]!, path: m[2]! })),
  );
  expect(claims.length).toBeGreaterThan(0);
  for (const claim of claims) {
    const pkg = packages.get(claim.pkg);
    expect({ ...claim, known: pkg !== undefined }).toMatchObject({ known: true });
    const top = claim.path.split('/')[0]!;
    expect({ ...claim, shipped: (pkg!.manifest.files ?? []).includes(top) }).toMatchObject({ shipped: true });
    // The SDK's schema/ is the protocol's JSON Schema, copied at build time.
    const source = top === 'schema' && claim.pkg === '@host/plugin-sdk-v2' ? join('libs/protocol', claim.path) : join(pkg!.dir, claim.path);
    expect({ ...claim, exists: existsSync(join(ROOT, source)) }).toMatchObject({ exists: true });
  }
});

it('states the Node.js version each package requires', () => {
  const sdk = packages.get('@host/plugin-sdk-v2')!.manifest.engines!.node!;
  const version = /^>=(\d+\.\d+)/.exec(sdk)![1];
  expect(readFileSync(join(ROOT, 'libs/plugin-sdk/README.md'), 'utf8')).toContain(`Node.js ${version} or newer`);
  // A new plugin project runs on what its SDK runs on.
  expect(readFileSync(join(ROOT, 'tools/host-plugin/src/templates.ts'), 'utf8')).toContain(`engines: { node: '${sdk}' }`);
  expect(json('examples/echo-plugin/package.json').engines.node).toBe(sdk);
  const host = json('package.json').engines.node;
  for (const { file, text } of docs) {
    for (const m of text.matchAll(/Node(?:\.js)? (\d+\.\d+)(?:\.\d+)? or newer/g)) {
      expect({ file, claim: m[0], matches: [sdk, host].some((range) => range === `>=${m[1]}`) }).toMatchObject({ matches: true });
    }
  }
});

it('gives host version ranges that include this host', () => {
  const hostVersion = packages.get('@host/host')!.manifest.version;
  const ranges = [
    ...docs.flatMap(({ file, text }) => [...text.matchAll(/"hostVersions": "([^"]+)"/g)].map((m) => ({ file, range: m[1]! }))),
    ...[...readFileSync(join(ROOT, 'tools/host-plugin/src/notes.ts'), 'utf8').matchAll(/e\.g\. \\?"([^"\\]+)\\?"/g)].map((m) => ({
      file: 'tools/host-plugin/src/notes.ts',
      range: m[1]!,
    })),
  ];
  expect(ranges.length).toBeGreaterThan(0);
  for (const r of ranges) expect({ ...r, includesHost: satisfies(hostVersion, r.range) }).toMatchObject({ includesHost: true });
});
