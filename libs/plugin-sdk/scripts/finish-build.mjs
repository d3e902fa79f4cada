#!/usr/bin/env node
// Second build step, after tsup:
// 1. ships the manifest JSON Schema inside the package (schema/), so a
//    plugin's manifest.json can point "$schema" at node_modules;
// 2. replaces every type the declarations import from the workspace
//    libraries (@host/protocol, @host/messages) with plain TypeScript types
//    generated from them (wire-types.d.ts), so the published .d.ts files need
//    neither those private packages nor zod. The types are printed from the
//    compiler's view of the protocol's zod schemas, so they cannot drift.
// 3. checks that no declaration file still refers to @host/* or zod.
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { printWireTypes } from './wire-types.mjs';

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(pkg, 'dist');

mkdirSync(join(pkg, 'schema'), { recursive: true });
copyFileSync(join(pkg, '../protocol/schema/manifest.schema.json'), join(pkg, 'schema/manifest.schema.json'));

const WORKSPACE = /^@host\/(protocol|messages)$/;
const declarationFiles = readdirSync(dist).filter((f) => /\.d\.(ts|mts)$/.test(f) && !f.startsWith('wire-types.'));
const IMPORT = /^(import|export)\s+(type\s+)?\{([^}]*)\}\s+from\s+'([^']+)';$/gm;
const BARE = /^import\s+'([^']+)';\n/gm;

/** @type {Map<string, Set<string>>} module -> exported names used */
const wanted = new Map();
for (const file of declarationFiles) {
  const text = readFileSync(join(dist, file), 'utf8');
  for (const m of text.matchAll(IMPORT)) {
    if (!WORKSPACE.test(m[4])) continue;
    const names = m[3]
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((s) => s.replace(/^type\s+/, '').split(/\s+as\s+/)[0]);
    const set = wanted.get(m[4]) ?? new Set();
    names.forEach((n) => set.add(n));
    wanted.set(m[4], set);
  }
}

const wire = printWireTypes({
  tsconfig: join(pkg, 'tsconfig.json'),
  virtualFile: join(pkg, 'src/__wire-types__.ts'),
  wanted,
});
writeFileSync(join(dist, 'wire-types.d.ts'), wire);
writeFileSync(join(dist, 'wire-types.d.mts'), wire);

for (const file of declarationFiles) {
  const path = join(dist, file);
  const ext = file.endsWith('.d.mts') ? '.mjs' : '.js';
  let text = readFileSync(path, 'utf8');
  text = text.replace(BARE, (line, spec) => (WORKSPACE.test(spec) ? '' : line));
  text = text.replace(IMPORT, (line, kw, type, names, spec) =>
    WORKSPACE.test(spec) ? line.replace(`'${spec}'`, `'./wire-types${ext}'`) : line,
  );
  writeFileSync(path, text);
}

const leaks = [];
for (const file of readdirSync(dist).filter((f) => /\.d\.(ts|mts)$/.test(f))) {
  const text = readFileSync(join(dist, file), 'utf8');
  for (const [i, line] of text.split('\n').entries()) {
    if (/^\s*\*/.test(line)) continue; // JSDoc examples mention the package itself
    if (/from '(zod|@host\/(protocol|messages))'|import\('(zod|@host\/)|\bz\.\w/.test(line)) leaks.push(`${file}:${i + 1}: ${line.trim()}`);
  }
}
if (leaks.length) {
  console.error(`declarations still refer to workspace packages or zod:\n${leaks.join('\n')}`);
  process.exit(1);
}
const count = [...wanted.values()].reduce((n, s) => n + s.size, 0);
console.log(
  `finish-build: schema copied; ${count} wire types written to dist/wire-types.d.ts; ${declarationFiles.length} declaration files rewritten`,
);
