import { promises as fs } from 'node:fs';
import { join } from 'node:path';

/** Another live host process uses this data directory. */
export class DataDirLockedError extends Error {
  constructor(
    readonly lockFile: string,
    readonly pid: number,
  ) {
    super(
      `The data directory is in use by another host process (pid ${pid}, lock ${lockFile}). ` +
        'Stop that host, or give this one its own data directory with HOST_DATA_DIR or --data-dir.',
    );
    this.name = 'DataDirLockedError';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes `<stateDir>/host.lock` for this process. Two hosts on one data
 * directory would overwrite each other's registry; a lock left by a process
 * that died (crash, SIGKILL) is taken over. Returns the release function.
 */
export async function acquireDataDirLock(stateDir: string): Promise<() => Promise<void>> {
  await fs.mkdir(stateDir, { recursive: true });
  const file = join(stateDir, 'host.lock');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const h = await fs.open(file, 'wx', 0o644);
      await h.writeFile(`${process.pid}\n`);
      await h.close();
      return async () => {
        const owner = Number.parseInt(await fs.readFile(file, 'utf8').catch(() => ''), 10);
        if (owner === process.pid) await fs.rm(file, { force: true });
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const pid = Number.parseInt(await fs.readFile(file, 'utf8').catch(() => ''), 10);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) throw new DataDirLockedError(file, pid);
    // Stale (its process is gone) or unreadable: remove and try again.
    await fs.rm(file, { force: true });
  }
  throw new Error(`Could not take the data directory lock ${file}; remove it if no host is running.`);
}
