import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { dirname } from 'node:path';
import { processStartTime } from '@host/host-fs';
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

/**
 * True while any process of the group led by `pid` still runs. A signal of 0
 * finds zombies too: processes that have exited and wait to be collected, as
 * bubblewrap's init in a sandbox's pid namespace does for a moment after the
 * plugin exits (bubblewrap leaves it to the system's init). On Linux a group
 * whose members are all zombies has ended.
 */
export function groupAlive(pid: number, procRoot = '/proc'): boolean {
  try {
    process.kill(process.platform === 'win32' ? pid : -pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return process.platform !== 'linux' || groupRuns(pid, procRoot);
}

/** The lowest CPU priority (the highest nice value): such a process runs when nothing else wants the CPU. */
export const LOWEST_PRIORITY = 19;

/**
 * Gives every process of the group led by `pgid` the lowest CPU priority
 * (processes it starts later inherit it); answers how many it reached. Raising
 * a nice value needs no privilege; it is not lowered back for the process's
 * life. Elsewhere than on Linux only the leader is reached.
 *
 * Where the kernel groups processes by session for scheduling (Linux's
 * autogroup, on by default on desktops and many servers), a process's nice
 * value only weighs it against its own session, and a plugin has a session
 * of its own (it is started detached): so the session's autogroup gets the
 * lowest priority too, through /proc/<pid>/autogroup.
 */
export function lowerGroupPriority(pgid: number, procRoot = '/proc'): number {
  const members = process.platform === 'linux' ? groupMembers(pgid, procRoot) : [pgid];
  let lowered = 0;
  for (const pid of members) {
    try {
      setPriority(pid, LOWEST_PRIORITY);
      lowered++;
    } catch {
      continue; // exited meanwhile, or not ours to change
    }
    try {
      if (process.platform === 'linux') writeFileSync(`${procRoot}/${pid}/autogroup`, String(LOWEST_PRIORITY));
    } catch {
      // no autogroup scheduling in this kernel, or the process is gone
    }
  }
  return lowered;
}

/** The live processes of group `pgid`, from /proc ([] when it cannot be read). */
function groupMembers(pgid: number, procRoot: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync(procRoot);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`${procRoot}/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') out.push(Number(name));
  }
  return out;
}

/** Whether /proc lists a process of group `pgid` that is not a zombie (true when /proc cannot be read). */
function groupRuns(pgid: number, procRoot: string): boolean {
  let entries: string[];
  try {
    entries = readdirSync(procRoot);
  } catch {
    return true;
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`${procRoot}/${name}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so fields count from the last ")".
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

/**
 * The variable every process of one plugin run inherits, with a value unique
 * to the run: how the host finds a process that left the run's process group
 * (setsid, a double fork into a new session), on Linux, from its environment
 * in /proc. A process that replaces its whole environment when it execs
 * escapes it too; see docs/operator/security.md.
 */
export const RUN_MARKER_VARIABLE = 'HOST_PLUGIN_RUN';

/**
 * The live processes whose environment carries `HOST_PLUGIN_RUN=marker`
 * (Linux; elsewhere none). Zombies and processes of other users have no
 * readable environment and are not listed.
 */
export function markedProcesses(marker: string, procRoot = '/proc'): number[] {
  if (process.platform !== 'linux') return [];
  const needle = Buffer.from(`${RUN_MARKER_VARIABLE}=${marker}\0`);
  let entries: string[];
  try {
    entries = readdirSync(procRoot);
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    let environ: Buffer;
    try {
      environ = readFileSync(`${procRoot}/${name}/environ`);
    } catch {
      continue;
    }
    // A whole variable: at the start or right after another one's NUL.
    for (let at = environ.indexOf(needle); at !== -1; at = environ.indexOf(needle, at + 1)) {
      if (at === 0 || environ[at - 1] === 0) {
        found.push(pid);
        break;
      }
    }
  }
  return found;
}

/** Signals every process carrying the run's marker; returns how many were signalled. */
export function signalMarked(marker: string, signal: GroupSignal): number {
  let n = 0;
  for (const pid of markedProcesses(marker)) {
    try {
      process.kill(pid, signal);
      n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
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
  /** Group leader pid -> its start time and its run's marker. */
  private readonly pids = new Map<number, { startTime?: string; marker?: string }>();
  private readonly onExit = () => this.killAll();
  private hooked = false;

  constructor(private readonly recordFile?: string) {}

  add(pid: number, marker?: string): void {
    const startTime = processStartTime(pid);
    this.pids.set(pid, { ...(startTime ? { startTime } : {}), ...(marker ? { marker } : {}) });
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
    let recorded: Array<{ pid: number; startTime?: string; marker?: string }> = [];
    try {
      recorded = JSON.parse(readFileSync(this.recordFile, 'utf8')) as typeof recorded;
    } catch {
      return [];
    }
    const reaped: number[] = [];
    for (const { pid, startTime, marker } of Array.isArray(recorded) ? recorded : []) {
      if (!Number.isInteger(pid) || pid <= 0 || this.pids.has(pid)) continue;
      const now = processStartTime(pid);
      const same = startTime === undefined || now === undefined ? groupAlive(pid) : now === startTime;
      if (same && signalGroup(pid, 'SIGKILL')) reaped.push(pid);
      // Processes of that run that left its group (the marker is random per run, so nothing else carries it).
      if (typeof marker === 'string' && marker.length > 0) signalMarked(marker, 'SIGKILL');
    }
    this.record();
    return reaped;
  }

  /** Writes the live groups down (synchronously: it happens at a spawn or an exit, and must precede a crash). */
  private record(): void {
    if (!this.recordFile) return;
    try {
      mkdirSync(dirname(this.recordFile), { recursive: true });
      writeFileSync(this.recordFile, JSON.stringify([...this.pids].map(([pid, known]) => ({ pid, ...known }))));
    } catch {
      // Without the record a host killed outright may leave plugins behind, as without this file.
    }
  }

  get size(): number {
    return this.pids.size;
  }

  /** SIGKILLs every tracked group at once (host exit). */
  killAll(): void {
    if (this.pids.size === 0) return; // nothing to end, and nothing to write down again
    for (const [pid, { marker }] of this.pids) {
      signalGroup(pid, 'SIGKILL');
      if (marker) signalMarked(marker, 'SIGKILL');
    }
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
