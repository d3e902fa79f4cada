import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { RuntimeStatus } from '@host/host-core';
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
