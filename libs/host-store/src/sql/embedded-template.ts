import { existsSync, promises as fs, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * A new embedded database starts as a copy of a template: a database cluster
 * PGlite's initdb made once. Running initdb is what made the first start of a
 * data directory take seconds (bootstrapping the catalogs in WebAssembly, on
 * a second PGlite instance); copying its result is a few milliseconds of file
 * copying.
 *
 * Where a template is looked for, first found wins:
 * 1. `pglite-template/` beside the running host's bundle (`dist/apps/host/`),
 *    made when the host is built;
 * 2. the workspace cache, `node_modules/.cache/host-store/pglite-template-<version>/`,
 *    made on first use (once per machine and PGlite version) when missing.
 *
 * A template names the PGlite version and initdb options it was made with
 * (`template.json`); one made with others is ignored, so an upgrade of PGlite
 * never starts a database from a cluster of another version. When no template
 * can be found or made (a read-only installation), the data directory is
 * initialised in place as before.
 */

/** The file in a template naming what made it; not copied into a data directory. */
export const TEMPLATE_MARKER = 'template.json';
/** The template's folder beside the host's bundle. */
export const BUNDLED_TEMPLATE_DIR = 'pglite-template';
/**
 * initdb's options for a new embedded database. WAL segments of 1 MiB instead
 * of 16 MiB: a small database needs no more, and a new data directory is 30 MB
 * instead of 42 MB.
 */
export const EMBEDDED_INITDB_PARAMS = ['--wal-segsize=1'];

interface TemplateMarker {
  pglite: string;
  initdb: string[];
}

/** The installed PGlite's version (its package.json; the package does not export it). */
export function pgliteVersion(): string {
  const entry = require.resolve('@electric-sql/pglite');
  const pkg = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

function expectedMarker(): TemplateMarker {
  return { pglite: pgliteVersion(), initdb: EMBEDDED_INITDB_PARAMS };
}

/** The workspace cache's template folder (under the node_modules that holds PGlite). */
export function cachedTemplateDir(): string {
  // <root>/node_modules/@electric-sql/pglite/dist/index.cjs -> <root>/node_modules
  const nodeModules = join(dirname(require.resolve('@electric-sql/pglite')), '..', '..', '..');
  return join(nodeModules, '.cache', 'host-store', `pglite-template-${pgliteVersion()}`);
}

/** Whether `dir` holds a complete template made by this PGlite with these options. */
export function isUsableTemplate(dir: string): boolean {
  try {
    const marker = JSON.parse(readFileSync(join(dir, TEMPLATE_MARKER), 'utf8')) as TemplateMarker;
    return JSON.stringify(marker) === JSON.stringify(expectedMarker()) && existsSync(join(dir, 'PG_VERSION'));
  } catch {
    return false;
  }
}

/**
 * Makes a template in `target`: initdb into a folder beside it, the marker
 * written last, then one rename, so a template is complete or absent. Another
 * process making the same template at the same time is fine: the first rename
 * wins and the other copy is removed. `initialise` opens (creating) and closes a
 * database in the folder it is given.
 */
export async function makeTemplate(target: string, initialise: (dir: string) => Promise<void>): Promise<void> {
  await fs.mkdir(dirname(target), { recursive: true });
  const building = join(dirname(target), `${basename(target)}.building-${process.pid}-${Math.random().toString(36).slice(2)}`);
  try {
    await initialise(building);
    await fs.writeFile(join(building, TEMPLATE_MARKER), JSON.stringify(expectedMarker()));
    await fs.rename(building, target).catch(async (e: NodeJS.ErrnoException) => {
      // Another process finished first; its template is as good as this one.
      if (!isUsableTemplate(target)) {
        await fs.rm(target, { recursive: true, force: true });
        await fs.rename(building, target);
      } else if (e.code !== 'ENOTEMPTY' && e.code !== 'EEXIST') throw e;
    });
  } finally {
    await fs.rm(building, { recursive: true, force: true });
  }
}

/**
 * Gives the database folder `dir` its cluster from a template when it has
 * none: copied beside it, then renamed into place, so a start interrupted
 * while copying leaves no half-made database. Answers what it did: `existing`
 * (`dir` already holds a database, or something else this leaves to PGlite),
 * `template` (copied from the template folder it names) or `none` (no template;
 * PGlite will run initdb in `dir`).
 */
export async function seedFromTemplate(
  dir: string,
  templates: readonly string[],
  initialise: (dir: string) => Promise<void>,
): Promise<{ seeded: 'existing' | 'none' } | { seeded: 'template'; from: string }> {
  if (existsSync(join(dir, 'PG_VERSION'))) return { seeded: 'existing' };
  const entries = await fs.readdir(dir).catch(() => undefined);
  if (entries && entries.length > 0) return { seeded: 'existing' };
  const cache = cachedTemplateDir();
  let from = [...templates, cache].find(isUsableTemplate);
  if (!from) {
    try {
      await makeTemplate(cache, initialise);
      if (isUsableTemplate(cache)) from = cache;
    } catch {
      // A read-only installation: PGlite initialises the data directory itself.
    }
  }
  if (!from) return { seeded: 'none' };
  const copying = `${dir}.new-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    await fs.cp(from, copying, { recursive: true, filter: (src) => basename(src) !== TEMPLATE_MARKER });
    // PostgreSQL refuses a data directory others may read.
    await fs.chmod(copying, 0o700);
    if (entries) await fs.rmdir(dir);
    await fs.rename(copying, dir);
  } finally {
    await fs.rm(copying, { recursive: true, force: true });
  }
  return { seeded: 'template', from };
}

/**
 * Writes a template to `target` (the host's build puts one beside its
 * bundle): the workspace cache's, made first if missing.
 */
export async function writeTemplate(target: string, initialise: (dir: string) => Promise<void>): Promise<void> {
  const cache = cachedTemplateDir();
  if (!isUsableTemplate(cache)) await makeTemplate(cache, initialise);
  await fs.rm(target, { recursive: true, force: true });
  await fs.cp(cache, target, { recursive: true });
}
