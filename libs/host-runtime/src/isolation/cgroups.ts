import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PluginResourceLimits } from './settings';

/** One plugin run's control group(s): the files its first process writes its pid to, and what happened in it. */
export interface RunGroup {
  readonly procsFiles: readonly string[];
  /** How many processes the kernel killed for going over the memory limit. */
  oomKills(): number;
  /** Removes the group (empty once every process of the run is gone). */
  remove(): void;
}

/** Where plugin cgroups are made: cgroup v2 (one unified folder) or v1 (the memory and pids hierarchies). */
export interface CgroupTree {
  readonly version: 'v1' | 'v2';
  /** Where its groups are made, to hand to another process of the host (the doctor's worker). */
  readonly location: CgroupTreeLocation;
  create(name: string, limits: PluginResourceLimits): RunGroup;
}

/** A found cgroup tree as plain data: v2's folder, or v1's memory and pids folders. */
export type CgroupTreeLocation = { version: 'v2'; base: string } | { version: 'v1'; memoryBase: string; pidsBase: string };

/** The tree at a location findCgroupTree found before (in this process or the host's). */
export function cgroupTreeAt(location: CgroupTreeLocation): CgroupTree {
  return location.version === 'v2' ? new V2Tree(location.base) : new V1Tree(location.memoryBase, location.pidsBase);
}

const FOLDER = 'host-plugins';

/** The host's own cgroup path per controller, from /proc/self/cgroup ("0::/path" for v2, "N:memory:/path" for v1). */
function ownCgroups(text: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    for (const c of m[1]!.split(',')) found.set(c, m[2]!);
  }
  return found;
}

/**
 * Finds a cgroup tree the host may make plugin groups in, with the memory and
 * pids controllers, or says why there is none. v2: the host's cgroup must be
 * writable; the host moves itself into a leaf `host` (a v2 cgroup with
 * processes cannot hand controllers to children) and enables memory and pids
 * for its children. v1: the memory and pids hierarchies under /sys/fs/cgroup.
 */
export function findCgroupTree(root = '/sys/fs/cgroup', selfFile = '/proc/self/cgroup'): CgroupTree | string {
  let own: Map<string, string>;
  try {
    own = ownCgroups(readFileSync(selfFile, 'utf8'));
  } catch {
    return `${selfFile} is not readable`;
  }
  const unified = own.get('');
  if (existsSync(join(root, 'cgroup.controllers')) && unified !== undefined) {
    const base = join(root, unified);
    const controllers = readFileSync(join(base, 'cgroup.controllers'), 'utf8').split(/\s+/);
    if (!controllers.includes('memory') || !controllers.includes('pids')) {
      return `cgroup v2: the host's cgroup ${base} has no memory and pids controllers (delegate them, e.g. systemd Delegate=yes)`;
    }
    try {
      const plugins = join(base, FOLDER);
      const subtree = readFileSync(join(base, 'cgroup.subtree_control'), 'utf8');
      if (!subtree.includes('memory') || !subtree.includes('pids')) {
        const leaf = join(base, 'host');
        mkdirSync(leaf, { recursive: true });
        writeFileSync(join(leaf, 'cgroup.procs'), String(process.pid));
        writeFileSync(join(base, 'cgroup.subtree_control'), '+memory +pids');
      }
      mkdirSync(plugins, { recursive: true });
      writeFileSync(join(plugins, 'cgroup.subtree_control'), '+memory +pids');
      return new V2Tree(plugins);
    } catch (e) {
      return `cgroup v2: ${base} is not writable for plugin groups (${(e as Error).message})`;
    }
  }
  const memory = own.get('memory');
  const pids = own.get('pids');
  if (memory === undefined || pids === undefined)
    return 'no cgroup v2 memory and pids controllers, and no cgroup v1 memory and pids hierarchies';
  const memoryBase = join(root, 'memory', memory, FOLDER);
  const pidsBase = join(root, 'pids', pids, FOLDER);
  try {
    mkdirSync(memoryBase, { recursive: true });
    mkdirSync(pidsBase, { recursive: true });
    if (!existsSync(join(memoryBase, 'memory.limit_in_bytes')) || !existsSync(join(pidsBase, 'pids.max'))) {
      return 'cgroup v1: the memory and pids hierarchies lack memory.limit_in_bytes or pids.max';
    }
    return new V1Tree(memoryBase, pidsBase);
  } catch (e) {
    return `cgroup v1: ${memoryBase} is not writable (${(e as Error).message})`;
  }
}

function counter(file: string, name: string): number {
  try {
    const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(readFileSync(file, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

function removeQuietly(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // still busy or gone: a later start's sweep tries again
  }
}

class V2Tree implements CgroupTree {
  readonly version = 'v2' as const;
  constructor(private readonly base: string) {}

  get location(): CgroupTreeLocation {
    return { version: 'v2', base: this.base };
  }

  create(name: string, limits: PluginResourceLimits): RunGroup {
    const dir = join(this.base, name);
    mkdirSync(dir, { recursive: true });
    if (limits.memoryBytes > 0) {
      writeFileSync(join(dir, 'memory.max'), String(limits.memoryBytes));
      if (existsSync(join(dir, 'memory.swap.max'))) writeFileSync(join(dir, 'memory.swap.max'), '0');
    }
    if (limits.processes > 0) writeFileSync(join(dir, 'pids.max'), String(limits.processes));
    return {
      procsFiles: [join(dir, 'cgroup.procs')],
      oomKills: () => counter(join(dir, 'memory.events'), 'oom_kill'),
      remove: () => removeQuietly(dir),
    };
  }
}

class V1Tree implements CgroupTree {
  readonly version = 'v1' as const;
  constructor(
    private readonly memoryBase: string,
    private readonly pidsBase: string,
  ) {}

  get location(): CgroupTreeLocation {
    return { version: 'v1', memoryBase: this.memoryBase, pidsBase: this.pidsBase };
  }

  create(name: string, limits: PluginResourceLimits): RunGroup {
    const memory = join(this.memoryBase, name);
    const pids = join(this.pidsBase, name);
    mkdirSync(memory, { recursive: true });
    mkdirSync(pids, { recursive: true });
    if (limits.memoryBytes > 0) {
      writeFileSync(join(memory, 'memory.limit_in_bytes'), String(limits.memoryBytes));
      // Swap counted too, where the kernel accounts it, so swapping out is no way around the limit.
      const memsw = join(memory, 'memory.memsw.limit_in_bytes');
      if (existsSync(memsw)) writeFileSync(memsw, String(limits.memoryBytes));
    }
    if (limits.processes > 0) writeFileSync(join(pids, 'pids.max'), String(limits.processes));
    return {
      procsFiles: [join(memory, 'cgroup.procs'), join(pids, 'cgroup.procs')],
      oomKills: () => counter(join(memory, 'memory.oom_control'), 'oom_kill'),
      remove: () => {
        removeQuietly(memory);
        removeQuietly(pids);
      },
    };
  }
}
