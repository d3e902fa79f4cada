import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { cgroupTreeAt, findCgroupTree, type CgroupTree, type CgroupTreeLocation } from './cgroups';
import { SANDBOX_NAMESPACES, scratchMounts, systemBinds } from './sandbox-args';
import type { IsolationMode, IsolationSettings } from './settings';

/** What this machine lets the host do for isolation, found once at start. */
export interface IsolationSupport {
  root: boolean;
  setpriv?: string;
  prlimit?: string;
  bwrap?: string;
  /** Whether bubblewrap can bound a tmpfs's size (--size). */
  bwrapSize?: boolean;
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
    // --size (bubblewrap 0.7) bounds the sandbox's /tmp; an older bubblewrap gets an unbounded one.
    support.bwrapSize = spawnSync(support.bwrap, ['--help'], { encoding: 'utf8', timeout: 10_000 }).stdout?.includes('--size') === true;
    const uid = String(settings.uidRange.first);
    const run = spawnSync(
      support.bwrap,
      [
        ...systemBinds(),
        '--proc',
        '/proc',
        '--dev',
        '/dev',
        ...scratchMounts(support.bwrapSize ? 1024 * 1024 : 0),
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

/** What the probe found as plain data (JSON), for another process of the host that starts plugins too (the doctor's worker). */
export type PortableIsolationSupport = Omit<IsolationSupport, 'cgroups'> & { cgroups: CgroupTreeLocation | null };

export function portableSupport(support: IsolationSupport): PortableIsolationSupport {
  return { ...support, cgroups: support.cgroups?.location ?? null };
}

/** The support another process of the host probed, without probing again (the host's cgroup is not the worker's to move). */
export function restoreSupport(portable: PortableIsolationSupport): IsolationSupport {
  return { ...portable, cgroups: portable.cgroups ? cgroupTreeAt(portable.cgroups) : null };
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
