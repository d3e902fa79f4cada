import { existsSync, lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { CliError } from './errors';
import { readJson, type PackageJson } from './project';

/** One file to put in the package. */
export interface PackFile {
  /** POSIX path inside the ZIP. */
  path: string;
  /** Where to read it. */
  source: string;
  /** 0o755 for executables, 0o644 otherwise. */
  mode: number;
  size: number;
}

/** One installed package of the runtime dependency closure. */
export interface ResolvedPackage {
  name: string;
  version: string;
  /** Its folder inside the ZIP, e.g. `node_modules/@host/plugin-sdk-v2`. */
  zipDir: string;
  /** The real folder it is read from (links followed). */
  realDir: string;
  /** Reached through a symbolic link (a workspace or `file:` dependency). */
  linked: boolean;
  files: PackFile[];
  packageJson: PackageJson;
}

const ALWAYS_EXCLUDED = new Set(['node_modules', '.git', '.svn', '.hg', '.DS_Store', 'npm-debug.log', '.npmrc', '.bin']);

/** Finds `node_modules/<name>` the way Node does: from `fromDir` upwards. */
export function findPackageDir(name: string, fromDir: string): string | undefined {
  let dir = fromDir;
  for (;;) {
    const candidate = join(dir, 'node_modules', ...name.split('/'));
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function modeOf(file: string): number {
  return statSync(file).mode & 0o111 ? 0o755 : 0o644;
}

/** Every regular file under `dir` (relative POSIX paths, sorted), skipping excluded names and links. */
export function walkFiles(dir: string, skipped: string[], base = dir): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (ALWAYS_EXCLUDED.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) {
      skipped.push(relative(base, path).split(sep).join('/'));
      continue;
    }
    if (entry.isDirectory()) out.push(...walkFiles(path, skipped, base));
    else if (entry.isFile()) out.push(relative(base, path).split(sep).join('/'));
  }
  return out.sort();
}

function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
      if (glob[i + 1] === '/') i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}(/.*)?$`);
}

/**
 * The files `npm pack` would publish for a linked package: package.json,
 * README, LICENSE and what `files` lists (folders, files and globs). Without
 * `files`, everything but the always-excluded names.
 */
function publishedFiles(realDir: string, pkg: PackageJson, skipped: string[]): string[] {
  const all = walkFiles(realDir, skipped);
  if (!Array.isArray(pkg.files)) return all;
  const patterns = pkg.files.map((f) => globToRegExp(f.replace(/^\.\//, '').replace(/\/$/, '')));
  const always = /^(package\.json|(readme|license|licence)(\.[^/]*)?)$/i;
  return all.filter((f) => always.test(f) || patterns.some((p) => p.test(f)));
}

function runtimeDeps(pkg: PackageJson): { name: string; optional: boolean }[] {
  const required = Object.keys(pkg.dependencies ?? {}).map((name) => ({ name, optional: false }));
  const optional = Object.keys(pkg.optionalDependencies ?? {}).map((name) => ({ name, optional: true }));
  // Non-optional peers must be present at run time too (npm installs them).
  const peers = Object.keys(pkg.peerDependencies ?? {})
    .filter((name) => !pkg.peerDependenciesMeta?.[name]?.optional)
    .map((name) => ({ name, optional: false }));
  return [...required, ...optional, ...peers];
}

/**
 * Resolves the production dependency closure of a project from its
 * package.json, as Node would load it: each dependency is found from the
 * real folder of the package that needs it, links are followed and real
 * files copied. Packages are laid out flat under `node_modules/`, and nested
 * under their dependant when two versions of one name are needed.
 */
export function resolveClosure(projectDir: string, pkg: PackageJson): { packages: ResolvedPackage[]; skippedLinks: string[] } {
  const packages: ResolvedPackage[] = [];
  const byReal = new Map<string, ResolvedPackage>();
  const topLevel = new Map<string, string>(); // name -> realDir placed at node_modules/<name>
  const skippedLinks: string[] = [];
  const missing: string[] = [];
  const queue: { name: string; optional: boolean; fromDir: string; parentZipDir: string; requiredBy: string }[] = runtimeDeps(pkg).map(
    (d) => ({
      ...d,
      fromDir: projectDir,
      parentZipDir: '',
      requiredBy: 'package.json',
    }),
  );
  while (queue.length > 0) {
    const dep = queue.shift() as (typeof queue)[number];
    const location = findPackageDir(dep.name, dep.fromDir);
    if (!location) {
      if (!dep.optional) missing.push(`${dep.name} (needed by ${dep.requiredBy})`);
      continue;
    }
    const realDir = realpathSync(location);
    if (byReal.has(realDir)) continue;
    const packageJson = readJson(join(realDir, 'package.json')) as PackageJson;
    const placed = topLevel.get(dep.name);
    let zipDir = `node_modules/${dep.name}`;
    if (placed === undefined) topLevel.set(dep.name, realDir);
    else zipDir = `${dep.parentZipDir}/node_modules/${dep.name}`;
    const linked = lstatSync(location).isSymbolicLink() || !realDir.split(sep).includes('node_modules');
    const skipped: string[] = [];
    const files = (linked ? publishedFiles(realDir, packageJson, skipped) : walkFiles(realDir, skipped)).map((rel) => {
      const source = join(realDir, rel);
      return { path: `${zipDir}/${rel}`, source, mode: modeOf(source), size: statSync(source).size };
    });
    skippedLinks.push(...skipped.map((s) => `${zipDir}/${s}`));
    const resolved: ResolvedPackage = {
      name: dep.name,
      version: packageJson.version ?? '0.0.0',
      zipDir,
      realDir,
      linked,
      files,
      packageJson,
    };
    packages.push(resolved);
    byReal.set(realDir, resolved);
    for (const next of runtimeDeps(packageJson)) {
      queue.push({ ...next, fromDir: realDir, parentZipDir: zipDir, requiredBy: `${dep.name}@${resolved.version}` });
    }
  }
  if (missing.length > 0)
    throw new CliError(
      'PACK_DEPENDENCY_UNRESOLVED',
      `${missing.length} production dependenc${missing.length === 1 ? 'y is' : 'ies are'} not installed`,
      missing,
    );
  packages.sort((a, b) => (a.zipDir < b.zipDir ? -1 : a.zipDir > b.zipDir ? 1 : 0));
  return { packages, skippedLinks };
}
