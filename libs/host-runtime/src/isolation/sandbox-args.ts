import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import type { NetworkAccess } from '@host/protocol';

/** The system folders a runtime needs (read-only): programs and libraries, never home folders or /var, /srv, /opt. */
const SYSTEM_TREES = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/**
 * The few files of /etc that runtimes read: the dynamic linker's, TLS (OpenSSL's configuration and the
 * certificates; Fedora's crypto policies, which its openssl.cnf includes), name resolution, services and
 * protocols, the time zone, locale aliases, the system's name (.NET reads os-release), and the user and
 * group names.
 */
export const ETC_FILES = [
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/pki',
  '/etc/crypto-policies',
  '/etc/resolv.conf',
  '/etc/hosts',
  '/etc/nsswitch.conf',
  '/etc/host.conf',
  '/etc/gai.conf',
  '/etc/services',
  '/etc/protocols',
  '/etc/localtime',
  '/etc/timezone',
  '/etc/locale.alias',
  '/etc/os-release',
  '/etc/passwd',
  '/etc/group',
];

/** The system trees' prefixes, for links of /etc that point into them. */
function inSystemTree(path: string): boolean {
  return SYSTEM_TREES.some((tree) => path === tree || path.startsWith(`${tree}/`));
}

/**
 * One file of /etc: a link into the system trees (/etc/localtime to a zone of /usr/share/zoneinfo,
 * /etc/os-release) stays a link, since runtimes read the zone's name from it; anything else is bound
 * read-only when it exists.
 */
function etcEntry(file: string): string[] {
  try {
    if (lstatSync(file).isSymbolicLink()) {
      const target = readlinkSync(file);
      if (inSystemTree(realpathSync(file))) return ['--symlink', target, file];
    }
  } catch {
    // missing or a dangling link: the bind below is skipped by bubblewrap
  }
  return ['--ro-bind-try', file, file];
}

/** bubblewrap arguments that mount the system's programs and libraries read-only (merged /usr symlinks stay symlinks). */
export function systemBinds(): string[] {
  const args: string[] = [];
  for (const tree of SYSTEM_TREES) {
    let link: string | null = null;
    try {
      const s = lstatSync(tree);
      if (s.isSymbolicLink()) link = readlinkSync(tree);
      else if (!s.isDirectory()) continue;
    } catch {
      continue;
    }
    if (link !== null) args.push('--symlink', link, tree);
    else args.push('--ro-bind', tree, tree);
  }
  // bubblewrap makes the folders on the way to a mount 0700 (root's), which the plugin's uid could not search.
  args.push('--perms', '0755', '--dir', '/etc');
  for (const file of ETC_FILES) args.push(...etcEntry(file));
  return args;
}

/** `--dir` arguments that make every folder on the way to `paths` searchable (0755), parents first, once each. */
function parentFolders(paths: readonly string[]): string[] {
  const made = new Set<string>(['/', '/tmp', '/etc', '/usr', '/proc', '/dev', '/dev/shm']);
  const args: string[] = [];
  for (const path of paths) {
    const parts = path.split('/').filter(Boolean);
    for (let i = 1; i < parts.length; i++) {
      const dir = `/${parts.slice(0, i).join('/')}`;
      if (made.has(dir)) continue;
      made.add(dir);
      args.push('--perms', '0755', '--dir', dir);
    }
  }
  return args;
}

/**
 * New namespaces of every sandbox. Not a user namespace: bubblewrap runs as
 * root and the plugin's uid must be the real one outside it too, so that the
 * files the host keeps from other users stay closed to the plugin even where
 * a mount would show them.
 */
export const SANDBOX_NAMESPACES = ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];

export interface SandboxPlan {
  /** Read-only: the package, the host's Node preload, a runtime installed outside /usr. */
  readOnly: readonly string[];
  /** Read-write: the plugin's data, config and cache folders. */
  writable: readonly string[];
  network: NetworkAccess;
  cwd: string;
  /** The most its /tmp and /dev/shm may hold each (the memory limit; 0: no bound but memory). */
  tmpBytes?: number;
}

/**
 * A /tmp and a /dev/shm of the sandbox's own, writable by every user with the sticky bit as on the host
 * (bubblewrap's default 0755 root folders would leave the plugin's uid no place for a temporary file, and
 * .NET and Python's multiprocessing need /dev/shm), bounded in size where a memory limit is set.
 */
export function scratchMounts(tmpBytes = 0): string[] {
  const size = tmpBytes > 0 ? ['--size', String(tmpBytes)] : [];
  return ['--perms', '1777', ...size, '--tmpfs', '/tmp', '--perms', '1777', ...size, '--tmpfs', '/dev/shm'];
}

/**
 * The bubblewrap arguments of one plugin: new user-visible root with only the
 * system's programs, its own folders at their host paths (so HOST_PLUGIN_*_DIR
 * stay valid), a /tmp and /dev of its own, its own /proc (new pid namespace:
 * the host's processes are not there), no IPC, UTS or cgroup namespace of the
 * host, and the host's network only for `any`. "none" and "loopback" both get
 * a network namespace whose only interface is its own loopback.
 */
export function sandboxArgs(plan: SandboxPlan): string[] {
  const args = [...systemBinds(), '--proc', '/proc', '--dev', '/dev', ...scratchMounts(plan.tmpBytes)];
  args.push(...parentFolders([...plan.readOnly, ...plan.writable]));
  for (const dir of plan.readOnly) args.push('--ro-bind', dir, dir);
  for (const dir of plan.writable) args.push('--bind', dir, dir);
  args.push(...SANDBOX_NAMESPACES);
  if (plan.network !== 'any') args.push('--unshare-net');
  args.push('--hostname', 'plugin', '--die-with-parent', '--chdir', plan.cwd);
  return args;
}
