import { isAbsolute, posix, relative, sep } from 'node:path';

/**
 * Where a manifest path lands in its package. The installer, the runtime
 * launch and the packer all ask this, and they must agree: a path the
 * installer accepts has to start, and a path the packer packs has to install.
 *
 * Manifest paths (`transport.stdio.workingDirectory`, a relative `command`, an
 * interpreter's script) are package-relative and may use either separator.
 * Only a whole `..` segment climbs: `..dist` is an ordinary folder name.
 */

/** `/x`, `\x`, `C:\x`, `C:x`: absolute, or bound to a drive, on some platform. */
function isRooted(path: string): boolean {
  return path.startsWith('/') || /^[A-Za-z]:/.test(path);
}

/**
 * Joins package-relative path pieces (each later one relative to the one
 * before, as a command is relative to the working directory) and normalises
 * the result to POSIX form: `''` for the package root, no `.` segments and no
 * trailing `/`. Returns `undefined` when any piece is absolute or the result
 * leaves the package.
 */
export function packagePath(...pieces: string[]): string | undefined {
  const posixPieces = pieces.map((p) => p.replace(/\\/g, '/'));
  if (posixPieces.some(isRooted)) return undefined;
  const joined = posix.join('.', ...posixPieces);
  if (joined === '..' || joined.startsWith('../')) return undefined;
  const trimmed = joined.replace(/\/$/, '');
  return trimmed === '.' ? '' : trimmed;
}

/**
 * Whether `target` is `root` or below it, for paths of this host's file
 * system (after `realpath`, say). Both must be absolute.
 */
export function isInsideDirectory(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}
