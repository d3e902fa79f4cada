import { createHash } from 'node:crypto';
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { MIGRATIONS } from './migrations';
import { isAlive } from '../data-dir-lock';

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
 * A template holds the host's schema too (every step of `MIGRATIONS` applied
 * when it was made), so the first start of a data directory has nothing to
 * migrate.
 *
 * A template names the PGlite version, initdb options and schema steps it was
 * made with (`template.json`); one made by another PGlite or with other initdb
 * options is ignored, so an upgrade of PGlite never starts a database from a
 * cluster of another version. One made with fewer steps (an older build's) is
 * still used when nothing better is found, its missing steps applied at start;
 * the workspace cache's folder name includes a digest of the steps, so adding
 * one makes a new cached template, migrated forward from the older one. When
 * no template can be found or made (a read-only installation), the data
 * directory is initialised in place as before.
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
  /** The schema steps applied (`Migration.version`, in order). */
  migrations: number[];
}

/** The installed PGlite's version (its package.json; the package does not export it). */
export function pgliteVersion(): string {
  const entry = require.resolve('@electric-sql/pglite');
  const pkg = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

function expectedMarker(): TemplateMarker {
  return { pglite: pgliteVersion(), initdb: EMBEDDED_INITDB_PARAMS, migrations: MIGRATIONS.map((m) => m.version) };
}

/** The folder of the workspace cache's templates (under the node_modules that holds PGlite). */
function cacheRoot(): string {
  // <root>/node_modules/@electric-sql/pglite/dist/index.cjs -> <root>/node_modules
  const nodeModules = join(dirname(require.resolve('@electric-sql/pglite')), '..', '..', '..');
  return join(nodeModules, '.cache', 'host-store');
}

/** The workspace cache's template folder: one per PGlite version and set of schema steps. */
export function cachedTemplateDir(): string {
  const steps = createHash('sha256')
    .update(JSON.stringify(MIGRATIONS.map((m) => [m.version, m.name])))
    .digest('hex')
    .slice(0, 12);
  return join(cacheRoot(), `pglite-template-${pgliteVersion()}-${steps}`);
}

function readMarker(dir: string): TemplateMarker | undefined {
  try {
    const marker = JSON.parse(readFileSync(join(dir, TEMPLATE_MARKER), 'utf8')) as TemplateMarker;
    return existsSync(join(dir, 'PG_VERSION')) ? marker : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether `dir` holds a complete template this host can start a database
 * from: made by this PGlite with these initdb options, its schema steps the
 * first of this host's (`complete`: all of them).
 */
export function isUsableTemplate(dir: string, complete = true): boolean {
  const marker = readMarker(dir);
  const want = expectedMarker();
  if (!marker || marker.pglite !== want.pglite || JSON.stringify(marker.initdb) !== JSON.stringify(want.initdb)) return false;
  const steps = Array.isArray(marker.migrations) ? marker.migrations : [];
  if (steps.length > want.migrations.length || steps.some((v, i) => v !== want.migrations[i])) return false;
  return !complete || steps.length === want.migrations.length;
}

/**
 * Makes the template's cluster in a folder: `base` false, an empty folder
 * (initdb); true, the folder holds an older template's cluster to migrate
 * forward. It opens the database there, brings it up to date and closes it.
 */
export type InitialiseTemplate = (dir: string, base: boolean) => Promise<void>;

/**
 * Makes a template in `target`: initdb (or a copy of the older template
 * `base`) into a folder beside it, migrated, the marker written last, then one
 * rename, so a template is complete or absent. Another process making the
 * same template at the same time is fine: the first rename wins and the other
 * copy is removed.
 */
export async function makeTemplate(target: string, initialise: InitialiseTemplate, base?: string): Promise<void> {
  await fs.mkdir(dirname(target), { recursive: true });
  const building = join(dirname(target), `${basename(target)}.building-${process.pid}-${Math.random().toString(36).slice(2)}`);
  try {
    if (base) await copyCluster(base, building);
    await initialise(building, base !== undefined);
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

/** Copies a template's cluster (not its marker) to `to`, readable by its owner only, as PostgreSQL requires. */
async function copyCluster(from: string, to: string): Promise<void> {
  await fs.cp(from, to, { recursive: true, filter: (src) => basename(src) !== TEMPLATE_MARKER });
  await fs.chmod(to, 0o700);
}

/** The templates in the workspace cache other than `keep` (older schema steps or PGlite versions). */
async function otherCachedTemplates(keep: string): Promise<string[]> {
  const names = await fs.readdir(dirname(keep)).catch(() => [] as string[]);
  return names
    .filter((n) => n.startsWith('pglite-template-') && !n.includes('.building-') && n !== basename(keep))
    .map((n) => join(dirname(keep), n));
}

/**
 * Removes what copies into `dir` interrupted by the death of their process
 * left beside it (`<dir>.new-<pid>-*`, the pid no longer running).
 */
async function removeAbandonedCopies(dir: string): Promise<void> {
  const prefix = `${basename(dir)}.new-`;
  for (const name of await fs.readdir(dirname(dir)).catch(() => [] as string[])) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (pid === process.pid || (Number.isInteger(pid) && pid > 0 && isAlive(pid))) continue;
    await fs.rm(join(dirname(dir), name), { recursive: true, force: true });
  }
}

/**
 * Gives the database folder `dir` its cluster from a template when it has
 * none: copied beside it, then renamed into place, so a start interrupted
 * while copying leaves no half-made database (and the next start removes
 * what it left). Answers what it did: `existing` (`dir` already holds a
 * database, or something else this leaves to PGlite), `template` (copied from
 * the template folder it names) or `none` (no template; PGlite will run initdb
 * in `dir`). `cache`: the workspace cache's template folder (default
 * `cachedTemplateDir()`), made when no complete template is found; `null`: none.
 */
export async function seedFromTemplate(
  dir: string,
  templates: readonly string[],
  initialise: InitialiseTemplate,
  cache: string | null = cachedTemplateDir(),
): Promise<{ seeded: 'existing' | 'none' } | { seeded: 'template'; from: string }> {
  if (existsSync(join(dir, 'PG_VERSION'))) return { seeded: 'existing' };
  const entries = await fs.readdir(dir).catch(() => undefined);
  if (entries && entries.length > 0) return { seeded: 'existing' };
  await removeAbandonedCopies(dir);
  const candidates = cache ? [...templates, cache] : [...templates];
  let from = candidates.find((t) => isUsableTemplate(t));
  if (!from && cache) {
    // An older template (fewer schema steps) is migrated forward into the cache; else initdb.
    const older = [...candidates, ...(await otherCachedTemplates(cache))].find((t) => isUsableTemplate(t, false));
    try {
      await makeTemplate(cache, initialise, older);
      if (isUsableTemplate(cache)) from = cache;
    } catch {
      // A read-only installation: an older template is migrated at start, or PGlite initialises the folder itself.
    }
  }
  from ??= candidates.find((t) => isUsableTemplate(t, false));
  if (!from) return { seeded: 'none' };
  const copying = `${dir}.new-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    await copyCluster(from, copying);
    if (entries) await fs.rmdir(dir);
    await fs.rename(copying, dir);
  } finally {
    await fs.rm(copying, { recursive: true, force: true });
  }
  return { seeded: 'template', from };
}

/**
 * Writes a template to `target` (the host's build puts one beside its
 * bundle): the workspace cache's, made first if missing (from an older cached
 * one when there is one). Older cached templates are then removed.
 */
export async function writeTemplate(target: string, initialise: InitialiseTemplate): Promise<void> {
  const cache = cachedTemplateDir();
  const others = await otherCachedTemplates(cache);
  if (!isUsableTemplate(cache))
    await makeTemplate(
      cache,
      initialise,
      others.find((t) => isUsableTemplate(t, false)),
    );
  for (const other of others) await fs.rm(other, { recursive: true, force: true });
  await fs.rm(target, { recursive: true, force: true });
  await fs.cp(cache, target, { recursive: true });
}
