import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

// The first steps of a plugin author, exactly as the READMEs write them, in a
// fresh clone of this repository: `npm install`, the documented build, then
// the documented `npx host-plugin ...` lines. A command that only works in a
// long-lived checkout (a bin link made by an earlier build, a dependency found
// by walking up into the repository) fails here. The clone is made from the
// committed HEAD, outside the repository, so nothing resolves upwards into it.
const ROOT = resolve(__dirname, '../../..');

let work: string;
let clone: string;

/** The first ```sh block of a Markdown file, as lines without comments. */
function firstShellBlock(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const block = /```sh\n([\s\S]*?)```/.exec(text);
  if (!block) throw new Error(`${file} has no sh block`);
  return block[1]!
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** Runs shell lines in one shell from `cwd`, stopping at the first failure. */
function sh(lines: string[], cwd: string): { status: number | null; out: string } {
  const r = spawnSync('bash', ['-eo', 'pipefail', '-c', lines.join('\n')], {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      // The cache the workspace install filled; the registry is only asked for what it lacks.
      npm_config_prefer_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      NX_DAEMON: 'false',
      NX_NO_CLOUD: 'true',
      NX_TUI: 'false',
      FORCE_COLOR: '0',
      CI: 'true',
    },
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'host-first-steps-'));
  clone = join(work, 'host');
  const r = spawnSync('git', ['clone', '--quiet', ROOT, clone], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git clone of the repository failed (the test needs a git checkout):\n${r.stderr}`);
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

it('the host-plugin README block works in a fresh clone: install, build, init, test, pack, doctor', () => {
  const lines = firstShellBlock('tools/host-plugin/README.md');
  const notes = lines.findIndex((l) => l.startsWith('npm run notes'));
  const setup = notes === -1 ? lines : lines.slice(0, notes);
  expect(setup[0]).toMatch(/^npm install && npx nx run-many -t build/);
  expect(setup.some((l) => l.startsWith('npx host-plugin init '))).toBe(true);

  const r = sh(setup, clone);
  if (r.status !== 0) throw new Error(`the documented steps failed:\n${r.out.slice(-6000)}`);
  // npx found the workspace's command, not a package of that name on the registry.
  expect(existsSync(join(clone, 'node_modules/.bin/host-plugin'))).toBe(true);
  expect(r.out).toMatch(/Created com\.example\.my-plugin/);
  expect(r.out).toMatch(/Tests:\s+\d+ passed/);
  expect(existsSync(join(work, 'my-plugin/artifacts/com.example.my-plugin.zip'))).toBe(true);
  // The documented doctor line ran the conformance suite on the packed plugin, and it conforms.
  expect(setup.some((l) => l.startsWith('npx host-plugin doctor '))).toBe(true);
  expect(r.out).toMatch(/^\d+ passed, 0 failed, \d+ skipped in [\d.]+ s: conforms$/m);

  if (notes !== -1) {
    // Without a terminal the notes command cannot ask; it names each missing fact and the flag for it.
    const n = sh([`cd ../my-plugin`, lines[notes]!], clone);
    if (n.status === 0) expect(existsSync(join(work, 'my-plugin/RELEASE_NOTES.md'))).toBe(true);
    else expect(n.out).toMatch(/NOTES_INPUT_MISSING[\s\S]*--host-versions/);
  }
}, 900_000);

it('the SDK README first step gives a project that installs in a fresh clone', () => {
  const lines = firstShellBlock('libs/plugin-sdk/README.md');
  expect(lines.some((l) => l.startsWith('npx host-plugin init '))).toBe(true);
  // The build ran in the first test; `npm install` again is a no-op there.
  const r = sh(lines, clone);
  if (r.status !== 0) throw new Error(`the documented steps failed:\n${r.out.slice(-6000)}`);
  const dir = lines.find((l) => l.startsWith('npx host-plugin init '))!.split(/\s+/)[3]!;
  expect(existsSync(join(clone, dir, 'node_modules/@host/plugin-sdk-v2/package.json'))).toBe(true);
}, 900_000);
