import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { EMITTERS, type Emitter, type GeneratedFile } from './emitters';
import { readProtocol } from './read-protocol';

/** The repository root (this file is tools/sdk-codegen/src/generate.ts). */
export const REPO_ROOT = join(__dirname, '..', '..', '..');

/** Every generated file of the chosen languages (all by default), in memory. */
export function generate(root: string = REPO_ROOT, languages?: readonly string[]): { emitter: Emitter; files: GeneratedFile[] }[] {
  const model = readProtocol(join(root, 'libs', 'protocol'));
  const chosen = languages ? EMITTERS.filter((e) => languages.includes(e.language)) : EMITTERS;
  if (languages) {
    const unknown = languages.filter((l) => !EMITTERS.some((e) => e.language === l));
    if (unknown.length) throw new Error(`unknown language(s) ${unknown.join(', ')}; known: ${EMITTERS.map((e) => e.language).join(', ')}`);
  }
  return chosen.map((emitter) => ({ emitter, files: emitter.emit(model) }));
}

function listFiles(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const path = join(dir, name);
    if (name === '__pycache__') return [];
    return statSync(path).isDirectory() ? listFiles(path) : [path];
  });
}

/**
 * Differences between the committed files and a fresh generation: stale or
 * missing files, and files in an emitter's folder that it no longer writes.
 */
export function staleFiles(root: string = REPO_ROOT): string[] {
  const problems: string[] = [];
  for (const { emitter, files } of generate(root)) {
    const expected = new Map(files.map((f) => [f.path, f.content]));
    for (const [path, content] of expected) {
      let actual: string | undefined;
      try {
        actual = readFileSync(join(root, path), 'utf8');
      } catch {
        actual = undefined;
      }
      if (actual === undefined) problems.push(`${path}: missing`);
      else if (actual !== content) problems.push(`${path}: differs from a fresh generation`);
    }
    for (const path of listFiles(join(root, emitter.outDir))) {
      const rel = relative(root, path).split('\\').join('/');
      if (!expected.has(rel)) problems.push(`${rel}: not generated any more`);
    }
  }
  return problems;
}
