import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cgroupTreeAt, findCgroupTree } from './cgroups';

// cgroups are files: the host finds its tree from /proc/self/cgroup, then makes folders and writes limits and pids
// into them. These tests lay out folders as each cgroup version's kernel shows them, so both paths run on any
// machine (the development machine's kernel mounts v1 only, where the isolation e2e suite runs the v1 path for real).
const LIMITS = { memoryBytes: 256 * 1024 * 1024, processes: 64, openFiles: 1024, cpuSeconds: 0 };

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'cgroups-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const write = (path: string, text: string) => {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
};
const self = (text: string) => {
  const file = join(root, 'self-cgroup');
  writeFileSync(file, text);
  return file;
};

describe('cgroup v2', () => {
  const v2 = (controllers: string, subtree = '') => {
    write(join(root, 'fs', 'cgroup.controllers'), controllers);
    write(join(root, 'fs', 'system.slice', 'host.service', 'cgroup.controllers'), controllers);
    write(join(root, 'fs', 'system.slice', 'host.service', 'cgroup.subtree_control'), subtree);
    return self('0::/system.slice/host.service\n');
  };

  it("moves the host into a leaf of its own cgroup, hands memory and pids to its children, and limits each run's group", () => {
    const tree = findCgroupTree(join(root, 'fs'), v2('cpu io memory pids'));
    if (typeof tree === 'string') throw new Error(tree);
    const base = join(root, 'fs', 'system.slice', 'host.service');
    expect(tree.version).toBe('v2');
    expect(tree.location).toEqual({ version: 'v2', base: join(base, 'host-plugins') });
    expect(readFileSync(join(base, 'host', 'cgroup.procs'), 'utf8')).toBe(String(process.pid));
    expect(readFileSync(join(base, 'cgroup.subtree_control'), 'utf8')).toBe('+memory +pids');
    expect(readFileSync(join(base, 'host-plugins', 'cgroup.subtree_control'), 'utf8')).toBe('+memory +pids');

    const group = cgroupTreeAt(tree.location).create('com.example.a-1', LIMITS);
    const dir = join(base, 'host-plugins', 'com.example.a-1');
    expect(group.procsFiles).toEqual([join(dir, 'cgroup.procs')]);
    expect(readFileSync(join(dir, 'memory.max'), 'utf8')).toBe(String(LIMITS.memoryBytes));
    expect(readFileSync(join(dir, 'pids.max'), 'utf8')).toBe('64');
    expect(group.oomKills()).toBe(0);
    writeFileSync(join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n');
    expect(group.oomKills()).toBe(1);
  });

  it('leaves the host where it is when its cgroup already hands memory and pids to children', () => {
    const tree = findCgroupTree(join(root, 'fs'), v2('memory pids', 'memory pids'));
    expect(typeof tree).not.toBe('string');
    expect(() => readFileSync(join(root, 'fs', 'system.slice', 'host.service', 'host', 'cgroup.procs'))).toThrow();
  });

  it('says why there is no tree when the host cgroup lacks the memory or pids controller', () => {
    expect(findCgroupTree(join(root, 'fs'), v2('cpu io'))).toMatch(/cgroup v2: .* has no memory and pids controllers \(delegate them/);
  });
});

describe('cgroup v1', () => {
  it('makes a group in each of the memory and pids hierarchies and limits swap with memory where the kernel counts it', () => {
    write(join(root, 'fs', 'memory', 'host-plugins', 'memory.limit_in_bytes'), '');
    write(join(root, 'fs', 'pids', 'host-plugins', 'pids.max'), '');
    const tree = findCgroupTree(join(root, 'fs'), self('12:pids:/\n11:memory:/\n1:name=systemd:/\n'));
    if (typeof tree === 'string') throw new Error(tree);
    expect(tree.version).toBe('v1');
    write(join(root, 'fs', 'memory', 'host-plugins', 'p-1', 'memory.memsw.limit_in_bytes'), '');
    const group = tree.create('p-1', LIMITS);
    expect(group.procsFiles).toEqual([
      join(root, 'fs', 'memory', 'host-plugins', 'p-1', 'cgroup.procs'),
      join(root, 'fs', 'pids', 'host-plugins', 'p-1', 'cgroup.procs'),
    ]);
    expect(readFileSync(join(root, 'fs', 'memory', 'host-plugins', 'p-1', 'memory.memsw.limit_in_bytes'), 'utf8')).toBe(
      String(LIMITS.memoryBytes),
    );
    expect(readFileSync(join(root, 'fs', 'pids', 'host-plugins', 'p-1', 'pids.max'), 'utf8')).toBe('64');
  });

  it('says why there is no tree without the memory and pids hierarchies, or without /proc/self/cgroup', () => {
    expect(findCgroupTree(join(root, 'fs'), self('1:name=systemd:/\n'))).toMatch(
      /no cgroup v2 memory and pids controllers, and no cgroup v1/,
    );
    expect(findCgroupTree(join(root, 'fs'), join(root, 'missing'))).toMatch(/is not readable/);
  });
});
