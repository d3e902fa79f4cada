import { promises as fs, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '@host/host-fs';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { acquireDataDirLock, DataDirLockedError, isAlive } from './data-dir-lock';
import { processStartTime, processState } from '@host/host-fs';
import { JsonRegistryStore, RegistryCorruptError } from './json-registry-store';
import { contractRecord, describeRegistryStoreContract } from './testing/registry-store-contract';

let contractDir = '';
describeRegistryStoreContract('JsonRegistryStore', {
  open: () => JsonRegistryStore.open((contractDir = mkdtempSync(join(tmpdir(), 'registry-contract-')))),
  reopen: () => JsonRegistryStore.open(contractDir),
  cleanup: async () => rmSync(contractDir, { recursive: true, force: true }),
});

describe('JsonRegistryStore', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'registry-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps its state in <stateDir>/registry.json', async () => {
    const s = await JsonRegistryStore.open(dir);
    await s.put(contractRecord('com.example.a'));
    await s.close();
    expect(s.file).toBe(join(dir, 'registry.json'));
    expect(JSON.parse(await fs.readFile(s.file, 'utf8'))).toMatchObject({
      formatVersion: 1,
      plugins: { 'com.example.a': contractRecord('com.example.a') },
    });
  });

  it('writes no file for an update that changes nothing', async () => {
    const s = await JsonRegistryStore.open(dir);
    await s.update('com.example.a', (r) => r);
    await s.putIfAbsent(contractRecord('com.example.a'));
    const before = (await fs.stat(s.file)).mtimeMs;
    await s.update('com.example.a', () => undefined);
    await s.putIfAbsent(contractRecord('com.example.a', '2.0.0'));
    expect((await fs.stat(s.file)).mtimeMs).toBe(before);
    await s.close();
  });

  it('refuses a corrupt registry file with a message that says how to recover', async () => {
    await fs.writeFile(join(dir, 'registry.json'), '{"formatVersion": 1, "plugins": ');
    await expect(JsonRegistryStore.open(dir)).rejects.toBeInstanceOf(RegistryCorruptError);
    await fs.writeFile(join(dir, 'registry.json'), '{"formatVersion": 7}');
    await expect(JsonRegistryStore.open(dir)).rejects.toThrow(/format version 1/);
  });

  it('removes temporary files of interrupted writes on open', async () => {
    await fs.writeFile(join(dir, '.registry.json.0123456789ab.tmp'), 'partial');
    await JsonRegistryStore.open(dir);
    expect(await fs.readdir(dir)).toEqual([]);
  });
});

describe('writeFileAtomic', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'atomic-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('replaces the file and leaves no temporary file', async () => {
    const f = join(dir, 'a.json');
    await writeFileAtomic(f, 'one');
    await writeFileAtomic(f, 'two', { mode: 0o600 });
    expect(await fs.readFile(f, 'utf8')).toBe('two');
    expect(await fs.readdir(dir)).toEqual(['a.json']);
    if (process.platform !== 'win32') expect((await fs.stat(f)).mode & 0o777).toBe(0o600);
  });

  it('leaves the old content when the write cannot complete', async () => {
    const f = join(dir, 'a.json');
    await writeFileAtomic(f, 'one');
    await fs.mkdir(join(dir, 'sub'));
    // Renaming a file over a directory fails: the target must stay intact.
    await expect(writeFileAtomic(join(dir, 'sub'), 'x')).rejects.toThrow();
    expect(await fs.readFile(f, 'utf8')).toBe('one');
    expect((await fs.readdir(dir)).sort()).toEqual(['a.json', 'sub']);
  });
});

describe('acquireDataDirLock', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'lock-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a second live owner and takes over a stale lock', async () => {
    // pid 1 is always alive: the lock counts as held by another process.
    await fs.writeFile(join(dir, 'host.lock'), '1\n');
    await expect(acquireDataDirLock(dir, { waitMilliseconds: 300 })).rejects.toBeInstanceOf(DataDirLockedError);
    // A pid far above any pid_max is certainly not running.
    await fs.writeFile(join(dir, 'host.lock'), '2147483646\n');
    const release = await acquireDataDirLock(dir);
    expect((await fs.readFile(join(dir, 'host.lock'), 'utf8')).trim().split(' ')[0]).toBe(String(process.pid));
    await release();
    expect(await fs.readdir(dir)).toEqual([]);
  });

  const onLinux = processStartTime(process.pid) !== undefined ? it : it.skip;
  onLinux('takes over a lock whose pid now belongs to another process, and refuses the process that took it', async () => {
    // The parent process is alive, but it is not the one that wrote this lock: its start time differs.
    const parent = process.ppid;
    await fs.writeFile(join(dir, 'host.lock'), `${parent} 1\n`);
    const release = await acquireDataDirLock(dir);
    await release();
    await fs.writeFile(join(dir, 'host.lock'), `${parent} ${processStartTime(parent)}\n`);
    await expect(acquireDataDirLock(dir, { waitMilliseconds: 300 })).rejects.toBeInstanceOf(DataDirLockedError);
  });

  onLinux('takes over a lock whose holder has ended but was not collected yet (a zombie)', async () => {
    // The parent forks a child that exits at once and never collects it: the child stays a zombie until the parent
    // ends. (A shell's `true & exec sleep` was not one: a shell may collect `true` before its exec.)
    const parent = spawn(
      'python3',
      ['-c', 'import os, time\npid = os.fork()\nif pid == 0:\n    os._exit(0)\nprint(pid, flush=True)\ntime.sleep(30)'],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    try {
      const zombie = Number((await once(parent.stdout!, 'data'))[0].toString().trim());
      for (let i = 0; i < 50 && processState(zombie) !== 'Z'; i++) await new Promise((r) => setTimeout(r, 20));
      expect(processState(zombie)).toBe('Z');
      await fs.writeFile(join(dir, 'host.lock'), `${zombie} ${processStartTime(zombie)}\n`);
      const release = await acquireDataDirLock(dir, { waitMilliseconds: 0 });
      expect((await fs.readFile(join(dir, 'host.lock'), 'utf8')).split(' ')[0]).toBe(String(process.pid));
      await release();
    } finally {
      parent.kill('SIGKILL');
    }
  });

  onLinux('waits for a holder that is still running to end, then takes the lock', async () => {
    const holder = spawn('sleep', ['1'], { stdio: 'ignore' });
    await once(holder, 'spawn');
    await fs.writeFile(join(dir, 'host.lock'), `${holder.pid} ${processStartTime(holder.pid!)}\n`);
    const release = await acquireDataDirLock(dir, { waitMilliseconds: 20_000 });
    expect(isAlive(holder.pid!)).toBe(false);
    await release();
  });
});
