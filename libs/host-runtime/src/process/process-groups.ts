import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { processStartTime } from '@host/host-store';
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
 * no plugin outlives the host. A host killed outright (SIGKILL, out of
 * memory) runs no exit hook: with a `recordFile`, each group's leader is
 * written down with its start time, and the next host ends the groups still
 * running (`reapLeftovers`) before it starts plugins again.
 */
export class ProcessGroups {
  private readonly pids = new Map<number, string | undefined>();
  private readonly onExit = () => this.killAll();
  private hooked = false;

  constructor(private readonly recordFile?: string) {}

  add(pid: number): void {
    this.pids.set(pid, processStartTime(pid));
    this.record();
    if (!this.hooked) {
      process.on('exit', this.onExit);
      this.hooked = true;
    }
  }

  delete(pid: number): void {
    if (this.pids.delete(pid)) this.record();
  }

  /**
   * Ends the plugin process groups a previous host process recorded and that
   * still run (their leader has the recorded start time, so a reused pid is
   * left alone). Returns the leaders' pids. Call before starting plugins.
   */
  reapLeftovers(): number[] {
    if (!this.recordFile) return [];
    let recorded: Array<{ pid: number; startTime?: string }> = [];
    try {
      recorded = JSON.parse(readFileSync(this.recordFile, 'utf8')) as typeof recorded;
    } catch {
      return [];
    }
    const reaped: number[] = [];
    for (const { pid, startTime } of Array.isArray(recorded) ? recorded : []) {
      if (!Number.isInteger(pid) || pid <= 0 || this.pids.has(pid)) continue;
      const now = processStartTime(pid);
      const same = startTime === undefined || now === undefined ? groupAlive(pid) : now === startTime;
      if (same && signalGroup(pid, 'SIGKILL')) reaped.push(pid);
    }
    this.record();
    return reaped;
  }

  /** Writes the live groups down (synchronously: it happens at a spawn or an exit, and must precede a crash). */
  private record(): void {
    if (!this.recordFile) return;
    try {
      mkdirSync(dirname(this.recordFile), { recursive: true });
      writeFileSync(
        this.recordFile,
        JSON.stringify([...this.pids].map(([pid, startTime]) => ({ pid, ...(startTime ? { startTime } : {}) }))),
      );
    } catch {
      // Without the record a host killed outright may leave plugins behind, as without this file.
    }
  }

  get size(): number {
    return this.pids.size;
  }

  /** SIGKILLs every tracked group at once (host exit). */
  killAll(): void {
    for (const pid of this.pids.keys()) signalGroup(pid, 'SIGKILL');
    this.pids.clear();
    this.record();
  }

  /** Removes the exit hook (after every group was stopped). */
  dispose(): void {
    this.killAll();
    if (this.hooked) process.off('exit', this.onExit);
    this.hooked = false;
  }
}
