import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inc } from 'semver';

// The release dry run of docs/releasing.md, offline, on this checkout: with a pending version plan it must
// show the next version of each npm package, the files the version is stamped into, the SDK archive names
// and the changelog entries, and write nothing.

const ROOT = join(__dirname, '..', '..', '..');
const PLAN = join(ROOT, '.nx', 'version-plans', `dry-run-check-${process.pid}.md`);
const NOTE = `A major change the release dry run check announces (${process.pid}).`;

const git = (...args: string[]) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' }).stdout;
const versionOf = (file: string) => (JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as { version: string }).version;

let output = '';
let code: number | null = null;
let nxOutput = '';
let nxCode: number | null = null;
let before = '';
let after = '';
const current = versionOf('libs/plugin-sdk/package.json');
// A major plan wins over any other pending plan, so the next version is known whatever else is pending.
const next = inc(current, 'major')!;

beforeAll(() => {
  before = git('status', '--porcelain');
  mkdirSync(join(ROOT, '.nx', 'version-plans'), { recursive: true });
  writeFileSync(PLAN, `---\n__default__: major\n---\n\n${NOTE}\n`);
  try {
    // A plain environment: not the Nx task this test runs in.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('NX_') && !k.startsWith('JEST')));
    const r = spawnSync(process.execPath, ['tools/scripts/release.mjs', '--dry-run'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', FORCE_COLOR: '0', CI: 'true' },
      maxBuffer: 16 * 1024 * 1024,
    });
    output = `${r.stdout}\n${r.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
    code = r.status;
    // Plain `nx release --dry-run`, as docs/releasing.md says it may be run (publishing is a release run's step).
    const n = spawnSync(process.execPath, [require.resolve('nx/bin/nx.js', { paths: [ROOT] }), 'release', '--dry-run', '--skip-publish'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', FORCE_COLOR: '0', CI: 'true' },
      maxBuffer: 16 * 1024 * 1024,
    });
    nxOutput = `${n.stdout}\n${n.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
    nxCode = n.status;
  } finally {
    rmSync(PLAN, { force: true });
  }
  after = git('status', '--porcelain');
}, 120_000);

describe('release dry run', () => {
  it('passes', () => {
    if (code !== 0) throw new Error(`release.mjs --dry-run exited ${code}:\n${output}`);
  });

  it('shows the next version of each npm package of the release group', () => {
    for (const manifest of ['libs/plugin-sdk/package.json', 'tools/host-plugin/package.json']) {
      expect(versionOf(manifest)).toBe(current);
      expect(output).toContain(`New version ${next} written to manifest: ${manifest}`);
    }
    expect(output).toContain(`SDK version ${current} -> ${next}`);
  });

  it('stamps the version source and each SDK, and names the SDK archives', () => {
    for (const file of [
      'libs/protocol/src/versions.json',
      'libs/plugin-sdk-python/host_sdk_v2/_generated/version.py',
      'libs/plugin-sdk-go/hostsdk/wire/catalog.go',
    ])
      expect(output).toContain(`  ${file}\n`);
    expect(output).toContain(`SDK-V2-Python-${next}.zip`);
    expect(output).toContain(`SDK-V2-Go-${next}.zip`);
  });

  it('previews a changelog entry for the workspace and each package, from the version plan', () => {
    for (const file of ['CHANGELOG.md', 'libs/plugin-sdk/CHANGELOG.md', 'tools/host-plugin/CHANGELOG.md']) {
      const at = output.indexOf(`Previewing an entry in ${file} for v${next}`);
      expect(at).toBeGreaterThanOrEqual(0);
      const entry = output.slice(at, at + 2000);
      expect(entry).toMatch(new RegExp(`^\\+ #+ ${next.replace(/\./g, '\\.')} \\(`, 'm'));
      expect(entry).toContain(NOTE);
    }
  });

  it("is what plain `nx release --dry-run` shows too: each package's next version and changelog", () => {
    if (nxCode !== 0) throw new Error(`nx release --dry-run exited ${nxCode}:\n${nxOutput}`);
    for (const manifest of ['libs/plugin-sdk/package.json', 'tools/host-plugin/package.json'])
      expect(nxOutput).toContain(`New version ${next} written to manifest: ${manifest}`);
    for (const file of ['CHANGELOG.md', 'libs/plugin-sdk/CHANGELOG.md', 'tools/host-plugin/CHANGELOG.md'])
      expect(nxOutput).toContain(`Previewing an entry in ${file} for v${next}`);
    expect(nxOutput).toContain(NOTE);
  });

  it('writes nothing', () => {
    expect(after).toBe(before);
  });
});
