import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeRawFixture } from '@host/plugin-conformance/testing';
import { DOCTOR_TIMEOUT_SECONDS, run, USAGE } from './cli';
import type { CliIO } from './io';

const root = mkdtempSync(join(tmpdir(), 'host-plugin-doctor-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function io(): CliIO & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    cwd: root,
    stdout,
    stderr,
    out: (t) => void stdout.push(t),
    err: (t) => void stderr.push(t),
    interactive: false,
    ask: async () => '',
  };
}

describe('host-plugin doctor', () => {
  it('reports every check of a conforming package folder and exits 0', async () => {
    writeRawFixture(join(root, 'good'));
    const out = io();
    expect(await run(['doctor', 'good'], out)).toBe(0);
    const text = out.stdout.join('\n');
    expect(text).toMatch(/^ {2}pass {2}installer\.package:/m);
    expect(text).toMatch(/^ {2}pass {2}ping\.while-busy:/m);
    // Every check of the protocol's conformance catalogue, and the installer's own check of the package.
    const catalogue = JSON.parse(readFileSync(join(__dirname, '../../../libs/protocol/conformance/checks.json'), 'utf8')) as {
      checks: { id: string }[];
    };
    const checks = catalogue.checks.length + 1;
    expect(text.match(/^ {2}pass {2}/gm)).toHaveLength(checks);
    expect(text).toMatch(new RegExp(`^${checks} passed, 0 failed, 0 skipped in [\\d.]+ s: conforms$`, 'm'));
  });

  it('names the failing check with what it saw, the fix and the spec section, and exits 1; --json gives the same as data', async () => {
    writeRawFixture(join(root, 'polluting'), 'stdout-pollution');
    const out = io();
    expect(await run(['doctor', 'polluting'], out)).toBe(1);
    const text = out.stdout.join('\n');
    expect(text).toMatch(/FAIL {2}stdout\.frames-only:[^\n]*\n\s+seen: \[[a-z-]+\] stdout carried "raw-plugin starting\\n"/);
    expect(text).toMatch(/fix : In protocol mode write logs to stderr/);
    expect(text).toMatch(/docs: docs\/protocol\/v2\.md#32-framing/);

    const json = io();
    expect(await run(['doctor', join(root, 'polluting'), '--json'], json)).toBe(1);
    const report = JSON.parse(json.stdout.join('\n'));
    expect(report.passed).toBe(false);
    expect(report.checks.find((c: { id: string }) => c.id === 'stdout.frames-only')).toMatchObject({ status: 'fail', required: true });
  });

  it('fails the installer check first and starts nothing when the installer would refuse the package', async () => {
    const dir = writeRawFixture(join(root, 'no-entry'));
    rmSync(join(dir, 'plugin.mjs'));
    const out = io();
    expect(await run(['doctor', 'no-entry', '--json'], out)).toBe(1);
    const report = JSON.parse(out.stdout.join('\n'));
    expect(report.checks[0]).toMatchObject({ id: 'installer.package', status: 'fail' });
    expect(report.checks[0].seen[0]).toMatch(/^INSTALL_ENTRY_MISSING: /);
    expect(report.checks.slice(1).every((c: { status: string }) => c.status === 'skip')).toBe(true);

    const text = io();
    expect(await run(['doctor', 'no-entry'], text)).toBe(1);
    // Nineteen checks skipped for one reason: the reason is printed once.
    expect(text.stdout.join('\n').match(/why : the installer would refuse the package/g)).toHaveLength(1);
    expect(text.stdout.join('\n')).toMatch(/0 passed, 1 failed, \d+ skipped in [\d.]+ s: does not conform$/m);
  });

  it('refuses a path that does not exist, and a call without one', async () => {
    const missing = io();
    expect(await run(['doctor', 'nowhere.zip'], missing)).toBe(1);
    expect(missing.stderr.join('\n')).toMatch(/^error DOCTOR_TARGET_MISSING: .*nowhere\.zip does not exist/);
    const usage = io();
    expect(await run(['doctor'], usage)).toBe(2);
    expect(usage.stderr.join('\n')).toMatch(/^error CLI_USAGE: doctor takes one package file or folder/);
  });

  it('bounds the whole run (--timeout, default 60 s): a plugin that never completes ends there, reported as not played', async () => {
    const dir = writeRawFixture(join(root, 'never-completes'), 'no-completion', 'org.conformance.never-completes');
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    manifest.concurrency.handlerDeadlineMilliseconds = 300_000;
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
    const out = io();
    expect(await run(['doctor', 'never-completes', '--timeout', '3'], out)).toBe(1);
    const text = out.stdout.join('\n');
    expect(text).toMatch(/^ {2}skip {2}events\.completion:/m);
    expect(text).toMatch(/why : not played: the run stopped at its time bound of 3 s \(scenarios not played to their end: session, /);
    expect(text).toMatch(/: does not conform$/m);
    expect(USAGE).toMatch(/--timeout <seconds>/);
    expect(USAGE).toMatch(/default 60, 0 for no bound/);
    expect(DOCTOR_TIMEOUT_SECONDS).toBe(60);
  }, 60_000);

  it('refuses a --timeout that is not a number of seconds', async () => {
    const out = io();
    expect(await run(['doctor', 'good', '--timeout', 'soon'], out)).toBe(2);
    expect(out.stderr.join('\n')).toMatch(/^error CLI_USAGE: --timeout takes seconds, 0 or more \(0: no bound\); got "soon"/);
  });
});

describe('host-plugin --help', () => {
  it('names the four languages it serves', async () => {
    const out = io();
    expect(await run(['--help'], out)).toBe(0);
    expect(out.stdout.join('\n').split('\n')[0]).toMatch(/protocol v2 plugins in Node\.js, Python, Go or C#$/);
  });
});
