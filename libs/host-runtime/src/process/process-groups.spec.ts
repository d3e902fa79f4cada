import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { groupAlive, LOWEST_PRIORITY, lowerGroupPriority, markedProcesses, RUN_MARKER_VARIABLE, signalMarked } from './process-groups';

// Linux finds a run's processes by the marker in their environment (/proc/<pid>/environ).
const linux = process.platform === 'linux' ? describe : describe.skip;

linux('markedProcesses', () => {
  it('finds exactly the processes whose environment carries the marker, and signals them', async () => {
    const sleeper = (env: NodeJS.ProcessEnv) =>
      spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { env, stdio: 'ignore', detached: true });
    const marked = sleeper({ DECOY: `${RUN_MARKER_VARIABLE}=run-a`, [RUN_MARKER_VARIABLE]: 'run-a' });
    // A longer value that starts with the marker and another variable ending in it are not the marker.
    const prefixed = sleeper({ OTHER: `${RUN_MARKER_VARIABLE}=run-a`, [RUN_MARKER_VARIABLE]: 'run-ab' });
    const exited = [marked, prefixed].map((c) => new Promise((r) => c.once('exit', r)));
    try {
      await new Promise((r) => setTimeout(r, 100));
      expect(markedProcesses('run-a')).toEqual([marked.pid]);
      expect(markedProcesses('run-ab')).toEqual([prefixed.pid]);
      expect(signalMarked('run-a', 'SIGKILL')).toBe(1);
      await exited[0];
      expect(markedProcesses('run-a')).toEqual([]);
    } finally {
      marked.kill('SIGKILL');
      prefixed.kill('SIGKILL');
      await Promise.all(exited);
    }
  });
});

linux('groupAlive', () => {
  it('counts a group whose only members are zombies as ended, and one with a running member as alive', async () => {
    const leader = spawn('sleep', ['30'], { stdio: 'ignore', detached: true });
    const exited = new Promise((r) => leader.once('exit', r));
    const proc = mkdtempSync(join(tmpdir(), 'proc-'));
    // A /proc of two processes of the group; the comm of one holds ") " as a process may name itself.
    const fake = (states: [string, string]) => {
      for (const [i, state] of states.entries()) {
        mkdirSync(join(proc, String(100 + i)), { recursive: true });
        writeFileSync(join(proc, String(100 + i), 'stat'), `${100 + i} (odd) name) ${state} 1 ${leader.pid} ${leader.pid} 0 -1\n`);
      }
    };
    try {
      expect(groupAlive(leader.pid!)).toBe(true);
      fake(['Z', 'Z']);
      expect(groupAlive(leader.pid!, proc)).toBe(false);
      fake(['Z', 'S']);
      expect(groupAlive(leader.pid!, proc)).toBe(true);
      leader.kill('SIGKILL');
      await exited;
      expect(groupAlive(leader.pid!)).toBe(false);
    } finally {
      leader.kill('SIGKILL');
      rmSync(proc, { recursive: true, force: true });
    }
  });
});

linux('lowerGroupPriority', () => {
  it('gives every process of the group the lowest CPU priority, and no process outside it', async () => {
    // A leader that starts a child in its own group and says its pid, beside an unrelated process.
    const leader = spawn(
      process.execPath,
      [
        '-e',
        "const c = require('child_process').spawn('sleep', ['30'], { stdio: 'ignore' }); console.log(c.pid); setInterval(() => {}, 1000)",
      ],
      { stdio: ['ignore', 'pipe', 'ignore'], detached: true },
    );
    const other = spawn('sleep', ['30'], { stdio: 'ignore', detached: true });
    const exited = [leader, other].map((c) => new Promise((r) => c.once('exit', r)));
    try {
      const child = Number(await new Promise<string>((r) => leader.stdout!.once('data', (d: Buffer) => r(d.toString()))));
      expect(lowerGroupPriority(leader.pid!)).toBe(2);
      expect([getPriority(leader.pid!), getPriority(child)]).toEqual([LOWEST_PRIORITY, LOWEST_PRIORITY]);
      // Scheduled by session (autogroup), the plugin's own session is weighed at the lowest priority as well.
      if (existsSync(`/proc/${leader.pid}/autogroup`))
        expect(readFileSync(`/proc/${leader.pid}/autogroup`, 'utf8')).toMatch(/ nice 19\n?$/);
      expect(getPriority(other.pid!)).toBe(getPriority());
      expect(lowerGroupPriority(999_999_999)).toBe(0);
    } finally {
      process.kill(-leader.pid!, 'SIGKILL');
      other.kill('SIGKILL');
      await Promise.all(exited);
    }
  });
});
