import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// `npm test` on a machine without the programs the suites need stops before it runs anything and names the
// command that installs them. Here the machine's programs are hidden: a PATH with only Node.js, and the fixed
// folders the probes look in (Debian's Go, Chromium, PostgreSQL) moved under a root that does not exist.

const ROOT = join(__dirname, '..', '..', '..');

let bin: string;
beforeAll(() => {
  bin = mkdtempSync(join(tmpdir(), 'only-node-'));
  symlinkSync(process.execPath, join(bin, 'node'));
});
afterAll(() => rmSync(bin, { recursive: true, force: true }));

it('npm test stops at once on a machine without its toolchains and prints the command that installs them', () => {
  const r = spawnSync(process.execPath, ['tools/scripts/run-tests.mjs'], {
    cwd: ROOT,
    env: { PATH: bin, HOME: process.env['HOME'] ?? '/tmp', HOST_TOOLCHAIN_ROOT: '/nonexistent-toolchains' },
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(r.status).toBe(1);
  const out = `${r.stdout}${r.stderr}`;
  expect(out).toContain('npm test needs programs this machine does not have:');
  for (const apt of ['chromium', 'postgresql', 'golang-1.23-go (bookworm-backports)', 'python3-mypy'])
    expect(out).toContain(`Debian package ${apt}`);
  expect(out).toMatch(/^ {2}(sudo )?bash tools\/scripts\/provision\.sh$/m);
  expect(r.stdout.trim().split('\n').at(-1)).toBe('0 passed, 1 failed');
  // Nothing ran: no lint, no test step.
  expect(out).not.toContain('=== ');
});
