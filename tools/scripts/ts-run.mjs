#!/usr/bin/env node
// Runs a TypeScript file of this workspace: bundles it with esbuild (workspace
// path aliases resolved, npm packages left external) and executes the result.
import { build } from 'esbuild';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node tools/scripts/ts-run.mjs <file.ts> [args...]');
  process.exit(2);
}
const root = resolve(new URL('../..', import.meta.url).pathname);
// Inside the workspace so the bundle resolves packages from node_modules.
const cache = join(root, 'node_modules', '.cache');
mkdirSync(cache, { recursive: true });
const dir = mkdtempSync(join(cache, 'ts-run-'));
const outfile = join(dir, 'main.cjs');
await build({
  entryPoints: [resolve(entry)],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  packages: 'external',
  tsconfig: join(root, 'tsconfig.base.json'),
  sourcemap: 'inline',
  define: { 'import.meta.url': 'importMetaUrl' },
  banner: { js: `const importMetaUrl = ${JSON.stringify(pathToFileURL(resolve(entry)).href)};` },
  logLevel: 'warning',
});
process.argv = [process.argv[0], resolve(entry), ...args];
const require = createRequire(join(root, 'package.json'));
try {
  require(outfile);
} finally {
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
}
