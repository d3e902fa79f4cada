import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import type { NetworkAccess } from '@host/protocol';
import type { IsolationStatus, LimitHit } from '../isolation/settings';
import type { PluginDirectories } from './launch';
import {
  groupAlive,
  markedProcesses,
  RUN_MARKER_VARIABLE,
  signalGroup,
  signalMarked,
  type GroupSignal,
  type ProcessGroups,
} from './process-groups';

/** What to start: the resolved command line, its folder and its whole environment. */
export interface LaunchSpec {
  command: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Which plugin this is, for runners that isolate plugins (see IsolatingProcessRunner). */
  plugin?: {
    pluginId: string;
    directories: PluginDirectories;
    /** What its manifest declares. */
    network: NetworkAccess;
    /** Host files the process must read besides its package (the Node preload). */
    readOnly?: readonly string[];
  };
}

/**
 * One started plugin process as the runtime needs it: three pipes, its exit,
 * and a way to signal it together with everything it started.
 */
export interface RunningProcess {
  /** Undefined when the process could not be started (an `error` follows). */
  readonly pid: number | undefined;
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Called once when the process exits. */
  onExit(listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
  /** Called when the process fails to start or a pipe fails. */
  onError(listener: (error: NodeJS.ErrnoException) => void): void;
  /** Signals the process and every process it started; false when none is left. */
  signal(signal: GroupSignal): boolean;
  /** True while any process it started may still run (after the plugin itself exited too). */
  descendantsAlive(): boolean;
  /** Forgets the process in host-exit bookkeeping once it and its descendants are gone. */
  release(): void;
  /** How the process is isolated, when a runner isolates it. */
  readonly isolation?: IsolationStatus;
  /** After the exit: the limit that ended the process, if one did. */
  limitHit?(): LimitHit | undefined;
}

/**
 * The seam around starting a plugin process. The supervisor never calls
 * `spawn` itself, so a sandboxed or containerised runner (a user namespace,
 * a container per plugin) can be added without touching it.
 */
export interface ProcessRunner {
  start(spec: LaunchSpec): RunningProcess;
}

/**
 * The default runner: a child process in its own process group (spawned
 * detached, no shell), so signals reach everything the plugin started, and
 * every group still alive when the host exits is killed. A process that left
 * the group (setsid) is still found by the run's marker (RUN_MARKER_VARIABLE)
 * on Linux and signalled with the group.
 */
export class LocalProcessRunner implements ProcessRunner {
  constructor(private readonly groups: ProcessGroups) {}

  start(spec: LaunchSpec): RunningProcess {
    const marker = randomBytes(12).toString('hex');
    const child = spawn(spec.command, [...spec.args], {
      cwd: spec.cwd,
      env: { ...spec.env, [RUN_MARKER_VARIABLE]: marker },
      detached: true,
      shell: false,
      windowsHide: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const pid = child.pid;
    if (pid !== undefined) this.groups.add(pid, marker);
    return {
      pid,
      stdin: child.stdin,
      stdout: child.stdout,
      stderr: child.stderr,
      onExit: (listener) => void child.on('exit', listener),
      onError: (listener) => void child.on('error', listener),
      signal: (signal) => {
        if (pid === undefined) return false;
        const group = signalGroup(pid, signal);
        return signalMarked(marker, signal) > 0 || group;
      },
      descendantsAlive: () => pid !== undefined && (groupAlive(pid) || markedProcesses(marker).length > 0),
      release: () => {
        if (pid !== undefined) this.groups.delete(pid);
      },
    };
  }
}
