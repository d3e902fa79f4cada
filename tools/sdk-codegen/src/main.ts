import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { generate, REPO_ROOT, staleFiles } from './generate';

// Usage: main.ts [--check] [--lang python]...
const args = process.argv.slice(2);
const languages = args.flatMap((a, i) => (args[i - 1] === '--lang' ? [a] : []));

if (args.includes('--check')) {
  const problems = staleFiles(REPO_ROOT);
  for (const p of problems) console.error(p);
  if (problems.length) {
    console.error('generated SDK files are stale: run `npx nx run sdk-codegen:generate` and commit the result');
    process.exit(1);
  }
  console.log('generated SDK files are up to date');
} else {
  for (const { emitter, files } of generate(REPO_ROOT, languages.length ? languages : undefined)) {
    // The folder holds generated files only: clear it so a file no longer generated disappears.
    const out = join(REPO_ROOT, emitter.outDir);
    try {
      if (statSync(out).isDirectory()) for (const name of readdirSync(out)) rmSync(join(out, name), { recursive: true, force: true });
    } catch {
      // first generation
    }
    for (const file of files) {
      const path = join(REPO_ROOT, file.path);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, file.content);
    }
    console.log(`${emitter.language}: wrote ${files.length} files to ${emitter.outDir}`);
  }
}
