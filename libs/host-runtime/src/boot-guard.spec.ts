import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { hostPaths, type RuntimeStatus } from '@host/host-core';
import { FilePluginLogStore } from './logs/file-plugin-log-store';
import { StdioPluginRuntime } from './stdio-runtime';
import { BOOT_GUARD_FILE } from './boot-guard';

// Real host processes on one data directory (src/boot-guard-host.spec-helper.ts),
// one per boot: a host that dies while a plugin runs must not start that
// plugin on every boot after.
const root = resolve(__dirname, '../../..');
let dataDir: string;

beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'boot-guard-'))));
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

async function boot(mode: 'die' | 'clean' | 'operator'): Promise<RuntimeStatus> {
  const child = spawn(
    process.execPath,
    [
      join(root, 'tools/scripts/ts-run.mjs'),
      join(__dirname, 'boot-guard-host.spec-helper.ts'),
      dataDir,
      mode,
      join(__dirname, '..', 'test-fixtures'),
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise((r) => child.on('exit', r));
  return JSON.parse(out.trim().split('\n').pop()!) as RuntimeStatus;
}

it('does not start on boot a plugin that was running when the host died twice in a row', async () => {
  expect((await boot('die')).state).toBe('running');
  expect((await boot('die')).state).toBe('running');
  const held = await boot('die');
  expect(held.state).toBe('failed');
  expect(held.stateReason).toMatch(
    /^not started with the host: the host stopped unexpectedly 2 times in a row while this plugin was running/,
  );
  // Held back on the next boots too, until an operator starts it; then the count starts again.
  expect((await boot('clean')).state).toBe('failed');
  expect((await boot('operator')).state).toBe('running');
  expect((await boot('die')).state).toBe('running');
  expect((await boot('die')).state).toBe('running');
}, 120_000);

it('forgets a host death after a clean shutdown', async () => {
  expect((await boot('die')).state).toBe('running');
  expect((await boot('clean')).state).toBe('running');
  expect(JSON.parse(readFileSync(join(dataDir, 'state', BOOT_GUARD_FILE), 'utf8'))).toEqual({});
  expect((await boot('die')).state).toBe('running');
  expect((await boot('die')).state).toBe('running');
}, 120_000);

it('ends the plugins a host killed outright left running, before the next host starts them again', async () => {
  // A host that starts a plugin which ignores the end of its stdin, then is killed with SIGKILL (no exit hook runs).
  const child = spawn(
    process.execPath,
    [
      join(root, 'tools/scripts/ts-run.mjs'),
      join(__dirname, 'boot-guard-host.spec-helper.ts'),
      dataDir,
      'killed',
      join(__dirname, '..', 'test-fixtures'),
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  const status = await new Promise<RuntimeStatus>((ok) =>
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) ok(JSON.parse(out.split('\n')[0]!) as RuntimeStatus);
    }),
  );
  expect(status.state).toBe('running');
  const pluginPid = status.pid!;
  child.kill('SIGKILL');
  await new Promise((r) => child.on('exit', r));
  await new Promise((r) => setTimeout(r, 300));
  expect(alive(pluginPid)).toBe(true); // the plugin outlived its host

  // The next host process ends it at start.
  const paths = hostPaths(dataDir);
  const runtime = new StdioPluginRuntime({
    paths,
    records: { get: async () => undefined },
    logs: new FilePluginLogStore(paths),
    sink: { send: () => Promise.reject(new Error('not used')) },
  });
  expect(runtime.reapLeftovers()).toEqual([pluginPid]);
  for (let i = 0; i < 50 && alive(pluginPid); i++) await new Promise((r) => setTimeout(r, 100));
  expect(alive(pluginPid)).toBe(false);
  expect(runtime.reapLeftovers()).toEqual([]);
  await runtime.dispose();
  // Starting the helper host compiles it first: seconds on a loaded machine.
}, 60_000);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
