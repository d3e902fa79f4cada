import { processStartTime, processState } from '@host/host-fs';
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

/** The owner a lock file names: `<pid> <start time>` (the start time where the platform gives one). */
function readOwner(text: string): { pid: number; startTime: string | undefined } {
  const [pid, startTime] = text.trim().split(/\s+/);
  return { pid: Number.parseInt(pid ?? '', 10), startTime };
}

/**
 * Whether a process with this id runs (EPERM: it does, owned by another
 * user). A zombie does not: it has ended and only waits for its parent to
 * collect its exit status, which after a SIGKILL may take a while.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const state = processState(pid);
  return state !== 'Z' && state !== 'X';
}

/** How long a new host waits for the lock's holder to end before it refuses to start. */
export const DATA_DIR_LOCK_WAIT_MILLISECONDS = 5_000;

/**
 * Takes `<stateDir>/host.lock` for this process. Two hosts on one data
 * directory would overwrite each other's registry; a lock left by a process
 * that died (crash, SIGKILL) is taken over, also when that process is a
 * zombie not yet collected or its pid was since given to another process (the
 * lock holds the pid and its start time). A holder that still runs may be on
 * its way out (a killed host freeing a large heap, a host finishing its
 * stop): it gets `waitMilliseconds` to end before the start is refused.
 * Returns the release function.
 */
export async function acquireDataDirLock(
  stateDir: string,
  options: { waitMilliseconds?: number; onWait?: (pid: number, waitMilliseconds: number) => void } = {},
): Promise<() => Promise<void>> {
  const waitMilliseconds = options.waitMilliseconds ?? DATA_DIR_LOCK_WAIT_MILLISECONDS;
  await fs.mkdir(stateDir, { recursive: true });
  const file = join(stateDir, 'host.lock');
  const giveUpAt = Date.now() + waitMilliseconds;
  let waited = false;
  for (let removals = 0; ;) {
    try {
      const h = await fs.open(file, 'wx', 0o644);
      const startTime = processStartTime(process.pid);
      await h.writeFile(`${process.pid}${startTime ? ` ${startTime}` : ''}\n`);
      await h.close();
      return async () => {
        const owner = readOwner(await fs.readFile(file, 'utf8').catch(() => ''));
        if (owner.pid === process.pid) await fs.rm(file, { force: true });
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const { pid, startTime } = readOwner(await fs.readFile(file, 'utf8').catch(() => ''));
    // A live pid holds the lock only if it is still the process that took it (not a later one given the same pid).
    const sameProcess = startTime === undefined || processStartTime(pid) === undefined || processStartTime(pid) === startTime;
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid) && sameProcess) {
      if (Date.now() >= giveUpAt) throw new DataDirLockedError(file, pid);
      if (!waited) options.onWait?.(pid, waitMilliseconds);
      waited = true;
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    // Stale (its process is gone, or its pid now belongs to another process) or unreadable: remove and try again.
    if (++removals > 3) throw new Error(`Could not take the data directory lock ${file}; remove it if no host is running.`);
    await fs.rm(file, { force: true });
  }
}
