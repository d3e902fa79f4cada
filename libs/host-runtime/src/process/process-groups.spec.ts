import { spawn } from 'node:child_process';
import { markedProcesses, RUN_MARKER_VARIABLE, signalMarked } from './process-groups';

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
