import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { groupAlive, ProcessGroups } from '@host/host-runtime';
import { reapDoctorLeftovers } from './leftovers';

describe('reapDoctorLeftovers', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'doctor-leftovers-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('ends the process groups a run wrote down and removes its record', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' });
    const pid = child.pid!;
    // What a doctor run's PluginRun writes while its plugin runs; the run's host then died without cleaning up.
    new ProcessGroups(join(dir, 'run-1.json')).add(pid);
    expect(groupAlive(pid)).toBe(true);
    expect(reapDoctorLeftovers(dir)).toEqual([pid]);
    await new Promise((r) => child.once('exit', r));
    expect(groupAlive(pid)).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
    expect(reapDoctorLeftovers(join(dir, 'missing'))).toEqual([]);
    expect(existsSync(join(dir, 'missing'))).toBe(false);
  });
});
