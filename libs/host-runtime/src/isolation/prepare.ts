import { accessSync, chmodSync, constants, lchownSync, lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, relative, sep } from 'node:path';

/**
 * Gives a plugin's own folders (data, config, cache) to its uid, walking them
 * without following links (a link the plugin planted cannot make the host
 * chown a file elsewhere).
 */
export function giveFolders(dirs: readonly string[], uid: number): void {
  const walk = (path: string): void => {
    const s = lstatSync(path);
    if (s.uid !== uid || s.gid !== uid) lchownSync(path, uid, uid);
    if (s.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  for (const dir of dirs) {
    walk(dir);
    chmodSync(dir, 0o700);
  }
}

/**
 * Makes the package readable and not writable to anyone but the host's user
 * (the installer may have written it under a umask of 077): folders 0755,
 * files 0644, executables 0755, owned by the host's user.
 */
export function sealPackage(dir: string): void {
  const hostUid = process.getuid?.() ?? 0;
  const hostGid = process.getgid?.() ?? 0;
  const walk = (path: string): void => {
    const s = lstatSync(path);
    if (s.isSymbolicLink()) return;
    if (s.uid !== hostUid || s.gid !== hostGid) lchownSync(path, hostUid, hostGid);
    const mode = s.isDirectory() || s.mode & 0o100 ? 0o755 : 0o644;
    if ((s.mode & 0o7777) !== mode) chmodSync(path, mode);
    if (s.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
}

/** The first folder on the way to `path` that other users cannot search (mode lacks o+x), or null when every one can. */
export function unreachableParent(path: string): string | null {
  const parts = path.split(sep).filter(Boolean);
  let at: string = sep;
  for (const part of parts.slice(0, -1)) {
    at = join(at, part);
    if ((statSync(at).mode & 0o001) === 0) return at;
  }
  return null;
}

/**
 * Finds a bare command (`node`, `python3`) on PATH as a user other than the
 * host's would: the first executable whose folders every user can search
 * (a runtime under /root is skipped). Answers the file and, when it lives
 * outside the system folders, the folder of its installation to mount.
 */
export function findRuntime(command: string, pathVariable: string | undefined): { file: string; installRoot?: string } | null {
  const candidates = isAbsolute(command)
    ? [command]
    : (pathVariable ?? '')
        .split(delimiter)
        .filter(isAbsolute)
        .map((d) => join(d, command));
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK);
      const real = realpathSync(file);
      if ((statSync(real).mode & 0o001) === 0 || unreachableParent(real) !== null || unreachableParent(file) !== null) continue;
      const inSystem = ['/usr/', '/bin/', '/sbin/', '/lib/', '/lib64/'].some((p) => real.startsWith(p));
      return inSystem ? { file } : { file, installRoot: dirname(dirname(real)) };
    } catch {
      // not there
    }
  }
  return null;
}

/** Lets other users search (not list) the folders from `root` down to `path`'s parent, where `path` is inside `root`. */
export function openPath(root: string, path: string): void {
  const rel = relative(root, path);
  if (rel.startsWith('..') || isAbsolute(rel)) return;
  let at = root;
  for (const part of ['', ...rel.split(sep).slice(0, -1)]) {
    at = join(at, part);
    const mode = statSync(at).mode & 0o7777;
    if ((mode & 0o001) === 0) chmodSync(at, mode | 0o011);
  }
}
