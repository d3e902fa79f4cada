import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { findCgroupTree, type CgroupTree } from './cgroups';
import { SANDBOX_NAMESPACES, systemBinds } from './sandbox-args';
import type { IsolationMode, IsolationSettings } from './settings';

/** What this machine lets the host do for isolation, found once at start. */
export interface IsolationSupport {
  root: boolean;
  setpriv?: string;
  prlimit?: string;
  bwrap?: string;
  cgroups: CgroupTree | null;
  /** Why each mode or mechanism is not available, for the start log and the docs' table. */
  problems: { ownUser?: string; sandbox?: string; cgroups?: string; rlimits?: string };
}

/** Helpers are taken from the system's folders only, never from a PATH a plugin's manifest could shape. */
const SYSTEM_BIN = ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin'];

function systemBinary(name: string): string | undefined {
  for (const dir of SYSTEM_BIN) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // next
    }
  }
  return undefined;
}

/**
 * Probes, in this order: running as root (own users need it), setpriv and
 * prlimit (util-linux), a cgroup tree with memory and pids, and bubblewrap,
 * by starting `true` in a sandbox the way a plugin is started (as a uid of
 * the range, with its own network namespace). A probe that fails says why.
 */
export function probeIsolation(settings: IsolationSettings): IsolationSupport {
  const root = process.platform === 'linux' && process.getuid?.() === 0;
  const support: IsolationSupport = { root, cgroups: null, problems: {} };
  if (process.platform !== 'linux') {
    support.problems.ownUser = support.problems.sandbox = support.problems.cgroups = `not available on ${process.platform}`;
    support.problems.rlimits = `not available on ${process.platform}`;
    return support;
  }
  support.prlimit = systemBinary('prlimit');
  if (!support.prlimit) support.problems.rlimits = 'prlimit (util-linux) is not installed';
  support.setpriv = systemBinary('setpriv');
  if (!root) support.problems.ownUser = 'the host does not run as root, so it cannot start plugins as other users';
  else if (!support.setpriv) support.problems.ownUser = 'setpriv (util-linux) is not installed';
  if (root) {
    const tree = findCgroupTree();
    if (typeof tree === 'string') support.problems.cgroups = tree;
    else support.cgroups = tree;
  } else {
    support.problems.cgroups = 'the host does not run as root';
  }
  support.bwrap = systemBinary('bwrap');
  if (support.problems.ownUser) support.problems.sandbox = `needs own users: ${support.problems.ownUser}`;
  else if (!support.bwrap) support.problems.sandbox = 'bubblewrap is not installed (Debian: apt-get install bubblewrap)';
  else {
    const uid = String(settings.uidRange.first);
    const run = spawnSync(
      support.bwrap,
      [
        ...systemBinds(),
        '--proc',
        '/proc',
        '--dev',
        '/dev',
        '--tmpfs',
        '/tmp',
        ...SANDBOX_NAMESPACES,
        '--unshare-net',
        '--die-with-parent',
        '--',
        support.setpriv!,
        '--reuid',
        uid,
        '--regid',
        uid,
        '--clear-groups',
        '--',
        'true',
      ],
      { timeout: 10_000, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' },
    );
    if (run.error || run.status !== 0) {
      const why = run.error ? run.error.message : (run.stderr || `exit code ${run.status}`).trim().split('\n')[0];
      support.problems.sandbox = `bubblewrap cannot create a sandbox here: ${why}`;
    }
  }
  return support;
}

/** The strongest mode the machine offers. */
export function strongestMode(support: IsolationSupport): IsolationMode {
  if (!support.problems.sandbox) return 'sandbox';
  if (!support.problems.ownUser) return 'own-user';
  return 'same-user';
}

/** The probe's findings as lines for the host's start log. */
export function describeSupport(support: IsolationSupport, chosen: IsolationMode): string[] {
  const limits = support.cgroups ? `cgroup ${support.cgroups.version}` : support.prlimit ? `rlimits (${support.problems.cgroups})` : 'none';
  return [
    `plugin isolation: ${chosen}; limits through ${limits}`,
    ...(support.problems.sandbox ? [`  sandbox not available: ${support.problems.sandbox}`] : []),
    ...(support.problems.ownUser ? [`  own users not available: ${support.problems.ownUser}`] : []),
  ];
}
