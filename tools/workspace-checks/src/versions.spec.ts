import { PROTOCOL_VERSION, RELEASE_VERSIONS } from '@host/protocol';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { satisfies, valid } from 'semver';

// The SDK version has one source (libs/protocol/src/versions.json); every other file that states it is
// listed in tools/scripts/versions.mjs. These tests run that script's check on the workspace, and on copies
// where one file was left behind by a release stamp, to show the check catches each disagreement.

const ROOT = join(__dirname, '..', '..', '..');
const SCRIPT = join(ROOT, 'tools', 'scripts', 'versions.mjs');
const SOURCE = 'libs/protocol/src/versions.json';

interface Report {
  version: string;
  stamps: { file: string; what: string; stated: string | null; places: number }[];
  problems: string[];
}

function versions(...args: string[]): { code: number | null; report?: Report; out: string; err: string } {
  const r = spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8' });
  const report = args[0] === 'check' && args.includes('--json') ? (JSON.parse(r.stdout) as Report) : undefined;
  return { code: r.status, report, out: r.stdout, err: r.stderr };
}

const workspace = versions('check', '--json').report!;
const files = [SOURCE, ...new Set(workspace.stamps.map((s) => s.file))];
const stampsIn = (file: string) => workspace.stamps.filter((s) => s.file === file).length;
/** How many places of a file state the version (a stamp with `all` covers several). */
const placesIn = (file: string) =>
  file === SOURCE ? 1 : workspace.stamps.filter((s) => s.file === file).reduce((n, s) => n + s.places, 0);

/** A copy of the source and every stamped file under a fresh folder. */
function copyOfWorkspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'versions-check-'));
  for (const f of files) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    copyFileSync(join(ROOT, f), join(dir, f));
  }
  return dir;
}

const copies: string[] = [];
afterAll(() => copies.forEach((d) => rmSync(d, { recursive: true, force: true })));
function copy(): string {
  const dir = copyOfWorkspace();
  copies.push(dir);
  return dir;
}

describe('one SDK version source', () => {
  it('is the version every SDK, package, sample and template states', () => {
    expect(workspace.problems).toEqual([]);
    expect(workspace.version).toBe(RELEASE_VERSIONS.sdkVersion);
    expect(valid(workspace.version)).toBe(workspace.version);
    // Node, Python and Go each have their package version and the constant their code sends.
    for (const lang of ['plugin-sdk/', 'plugin-sdk-python/', 'plugin-sdk-go/', 'host-plugin/'])
      expect(workspace.stamps.some((s) => s.file.includes(lang))).toBe(true);
  });

  it('agrees with the protocol version in the code and includes this host in the host versions', () => {
    expect(RELEASE_VERSIONS.protocolVersion).toBe(PROTOCOL_VERSION);
    const host = JSON.parse(readFileSync(join(ROOT, RELEASE_VERSIONS.hostVersionFrom), 'utf8')) as { name: string; version: string };
    expect(host.name).toBe('@host/host');
    expect(satisfies(host.version, RELEASE_VERSIONS.hostVersions)).toBe(true);
    expect(satisfies(RELEASE_VERSIONS.sdkVersion, RELEASE_VERSIONS.supportedSdkVersions)).toBe(true);
  });

  it('names the release archives from the stamped Python and Go constants', () => {
    const python = readFileSync(join(ROOT, 'libs/plugin-sdk-python/scripts/build_release.py'), 'utf8');
    expect(python).toMatch(/from host_sdk_v2\._version import SDK_VERSION/);
    expect(python).toMatch(/name = f"SDK-V2-Python-\{SDK_VERSION\}"/);
    const go = readFileSync(join(ROOT, 'libs/plugin-sdk-go/cmd/build-release/main.go'), 'utf8');
    expect(go).toMatch(/"SDK-V2-Go-" \+ hostsdk\.SDKVersion/);
  });

  it.each(files.slice(1).map((f) => [f]))('fails when %s is left behind by a new version', (file) => {
    const dir = copy();
    const stamped = versions('stamp', '2.0.1', '--root', dir);
    expect(stamped.code).toBe(0);
    expect(stamped.out).toContain(file);
    copyFileSync(join(ROOT, file), join(dir, file));
    const r = versions('check', '--root', dir);
    expect(r.code).toBe(1);
    const problems = r.err.trim().split('\n').slice(1);
    expect(problems).toHaveLength(stampsIn(file));
    for (const p of problems) expect(p.trim().startsWith(`${file}: the `)).toBe(true);
    expect(r.err).toContain(`is ${workspace.version}, ${SOURCE} says 2.0.1`);
  });

  it('fails for every stated version when only the source changes', () => {
    const dir = copy();
    const source = readFileSync(join(dir, SOURCE), 'utf8');
    expect(versions('stamp', '3.1.4', '--root', dir).code).toBe(0);
    for (const f of files.slice(1)) copyFileSync(join(ROOT, f), join(dir, f));
    const r = versions('check', '--root', dir, '--json');
    expect(r.code).toBe(1);
    expect(r.report!.problems).toHaveLength(workspace.stamps.length);
    expect(readFileSync(join(dir, SOURCE), 'utf8')).toBe(source.replace(`"sdkVersion": "${workspace.version}"`, '"sdkVersion": "3.1.4"'));
  });

  it('fails when a listed file no longer states a version where the pattern looks', () => {
    const dir = copy();
    const target = workspace.stamps.find((s) => s.what === 'Python SDK_VERSION')!.file;
    copyFileSync(join(ROOT, SOURCE), join(dir, target));
    const r = versions('check', '--root', dir);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${target}: the Python SDK_VERSION is no longer found`);
  });

  it('keeps package-lock.json in step with the stamped package.json files', () => {
    const dir = copy();
    copyFileSync(join(ROOT, 'package-lock.json'), join(dir, 'package-lock.json'));
    expect(versions('check', '--root', dir).code).toBe(0);
    expect(versions('stamp', '2.2.0', '--root', dir).out).toContain('package-lock.json');
    const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8'));
    expect(lock.packages['libs/plugin-sdk-python'].version).toBe('2.2.0');
    expect(lock.packages['examples/echo-plugin'].dependencies['@host/plugin-sdk-v2']).toBe('^2.2.0');
    expect(versions('check', '--root', dir).code).toBe(0);
    copyFileSync(join(ROOT, 'package-lock.json'), join(dir, 'package-lock.json'));
    const r = versions('check', '--root', dir, '--json');
    expect(r.code).toBe(1);
    expect(r.report!.problems).toContain(
      'package-lock.json: the entry of libs/plugin-sdk-go differs from libs/plugin-sdk-go/package.json (run the stamp again)',
    );
  });

  it('stamps a new version into the source and every listed file, and nothing else changes', () => {
    const dir = copy();
    expect(versions('stamp', '2.1.0-rc.1', '--root', dir).code).toBe(0);
    const r = versions('check', '--root', dir, '--json');
    expect(r.code).toBe(0);
    expect(r.report!.stamps.map((s) => s.stated)).toEqual(workspace.stamps.map(() => '2.1.0-rc.1'));
    for (const f of files) {
      const before = readFileSync(join(ROOT, f), 'utf8');
      const after = readFileSync(join(dir, f), 'utf8');
      expect(after.length - before.length).toBe(('2.1.0-rc.1'.length - workspace.version.length) * placesIn(f));
    }
    expect(versions('stamp', 'two', '--root', dir).err).toContain('not a semantic version: two');
  });
});
