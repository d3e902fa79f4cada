/**
 * Plugin processes run in their own process group (spawned `detached`), so a
 * stop reaches every process a plugin started, and a terminal's Ctrl-C does
 * not hit plugins behind the host's back.
 */
export type GroupSignal = 'SIGTERM' | 'SIGKILL';

/** Signals the whole group led by `pid`; false when no such group is left. */
export function signalGroup(pid: number, signal: GroupSignal): boolean {
  try {
    if (process.platform === 'win32') process.kill(pid, signal);
    else process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** True while any process of the group led by `pid` exists. */
export function groupAlive(pid: number): boolean {
  try {
    process.kill(process.platform === 'win32' ? pid : -pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The groups one runtime has started. When the host process exits (normally
 * or through process.exit) every remaining group is killed synchronously, so
 * no plugin outlives the host.
 */
export class ProcessGroups {
  private readonly pids = new Set<number>();
  private readonly onExit = () => this.killAll();
  private hooked = false;

  add(pid: number): void {
    this.pids.add(pid);
    if (!this.hooked) {
      process.on('exit', this.onExit);
      this.hooked = true;
    }
  }

  delete(pid: number): void {
    this.pids.delete(pid);
  }

  get size(): number {
    return this.pids.size;
  }

  /** SIGKILLs every tracked group at once (host exit). */
  killAll(): void {
    for (const pid of this.pids) signalGroup(pid, 'SIGKILL');
    this.pids.clear();
  }

  /** Removes the exit hook (after every group was stopped). */
  dispose(): void {
    this.killAll();
    if (this.hooked) process.off('exit', this.onExit);
    this.hooked = false;
  }
}
