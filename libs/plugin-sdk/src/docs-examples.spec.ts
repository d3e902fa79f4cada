import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

// Every public export carries a JSDoc @example; this compiles each of them
// (as its own module, against the SDK's sources) so no example rots.
const SRC = __dirname;
const TSC = require.resolve('typescript/bin/tsc');
// The workspace's tmp/ (ignored by git and lint), so imports resolve from its node_modules.
const TMP = join(__dirname, '../../../tmp');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name.startsWith('__') ? [] : sources(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts') ? [path] : [];
  });
}

function examples(): { where: string; code: string }[] {
  const out: { where: string; code: string }[] = [];
  for (const file of sources(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/@example\s*\n\s*\*\s*```ts\n([\s\S]*?)\n\s*\*\s*```/g)) {
      const code = (m[1] as string)
        .split('\n')
        .map((l) => l.replace(/^\s*\* ?/, ''))
        .join('\n');
      out.push({ where: `${relative(SRC, file)}:${text.slice(0, m.index).split('\n').length}`, code });
    }
  }
  return out;
}

describe('JSDoc examples', () => {
  const found = examples();

  it('exist for the main entry points', () => {
    const where = found.map((e) => e.where.split(':')[0]);
    for (const file of [
      'define-plugin.ts',
      'read-manifest.ts',
      'context.ts',
      'parts.ts',
      'errors.ts',
      'stdio/runtime.ts',
      'http/index.ts',
      'http/signature.ts',
      'testing/test-host.ts',
      'testing/command-match.ts',
    ])
      expect(where).toContain(file);
  });

  it('compile', () => {
    mkdirSync(TMP, { recursive: true });
    const dir = mkdtempSync(join(TMP, 'plugin-sdk-examples-'));
    try {
      const files = found.map((e, i) => {
        const name = `example-${i}.ts`;
        writeFileSync(join(dir, name), `// ${e.where}\n${e.code}\nexport {};\n`);
        return name;
      });
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          extends: join(__dirname, '../../../tsconfig.base.json'),
          compilerOptions: { noEmit: true, types: ['node'], noUnusedLocals: false },
          files,
        }),
      );
      try {
        execFileSync(process.execPath, [TSC, '-p', dir], { encoding: 'utf8' });
      } catch (error) {
        const out = (error as { stdout?: string }).stdout ?? String(error);
        // Name the source of each failing example, not the generated file.
        throw new Error(out.replace(/example-(\d+)\.ts/g, (_, i: string) => found[Number(i)]?.where ?? _));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
