import { chmodSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Makes the host's state folder (registry, host key, token hash, embedded
 * database, QQ Bot accounts) readable by the host's user only: the folder
 * and every folder in it 0700, every file 0600; likewise the key and token
 * files named by the configuration. Files written earlier under a wider umask
 * are narrowed here at each start.
 */
export function protectHostSecrets(stateDir: string, files: readonly string[], log: (level: 'warn', message: string) => void): void {
  const walk = (path: string): void => {
    const s = lstatSync(path);
    if (s.isSymbolicLink()) return;
    const mode = s.isDirectory() ? 0o700 : 0o600;
    if ((s.mode & 0o777) !== mode) chmodSync(path, mode);
    if (s.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(stateDir);
  for (const file of files) {
    try {
      const s = lstatSync(file);
      if (s.isFile() && (s.mode & 0o077) !== 0) chmodSync(file, 0o600);
    } catch (e) {
      log('warn', `could not make ${file} readable by the host's user only: ${(e as Error).message}`);
    }
  }
}
