import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AdmZip from 'adm-zip';
import { findGo as findGoToolchain, goEnv as goToolchainEnv, GoToolchainError, MIN_GO } from '@host/plugin-sdk-go/toolchain';
import { run } from './cli';
import { findGo, GO_SDK_VERSION, goModulePath, goSdkSourceVersion, isGoProject } from './go';
import type { CliIO } from './io';

function io(cwd: string): CliIO & { lines: string[] } {
  const lines: string[] = [];
  return { cwd, lines, out: (t) => void lines.push(t), err: (t) => void lines.push(t), interactive: false, ask: async () => '' };
}

const goEnv = goToolchainEnv();

describe('host-plugin init --lang go', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'host-plugin-go-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('scaffolds a project whose own tests pass and that `host-plugin pack` packs with the Go packer', async () => {
    const out = io(root);
    expect(await run(['init', 'go-echo', '--lang', 'go', '--id', 'com.example.goecho', '--author', 'Me'], out)).toBe(0);
    const dir = join(root, 'go-echo');
    for (const file of [
      'manifest.json',
      'go.mod',
      'main.go',
      'main_test.go',
      'sdk-go/go.mod',
      'sdk-go/hostsdk/stdio.go',
      'sdk-go/cmd/host-pack/main.go',
    ]) {
      expect({ file, exists: existsSync(join(dir, file)) }).toEqual({ file, exists: true });
    }
    expect(existsSync(join(dir, 'sdk-go', 'hostsdk', 'stdio_test.go'))).toBe(false);
    expect(isGoProject(dir)).toBe(true);
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    expect(manifest.transport.stdio).toEqual({ command: './goecho', args: ['--host-stdio'], workingDirectory: '.' });

    const tests = spawnSync(findGo(), ['test', './...'], { cwd: dir, encoding: 'utf8', env: goEnv });
    expect(tests.stdout + tests.stderr).toMatch(/^ok\s+example\.com\/goecho/m);
    expect(tests.status).toBe(0);
    // A plain `go build` writes the executable the manifest launches.
    const built = spawnSync(findGo(), ['build'], { cwd: dir, encoding: 'utf8', env: goEnv });
    expect(built.stderr).toBe('');
    expect(existsSync(join(dir, process.platform === 'win32' ? 'goecho.exe' : 'goecho'))).toBe(true);

    expect(await run(['pack', dir], io(root))).toBe(0);
    const goos = { win32: 'windows', darwin: 'darwin' }[process.platform as string] ?? process.platform;
    const goarch = { x64: 'amd64', ia32: '386' }[process.arch as string] ?? process.arch;
    const zip = new AdmZip(join(dir, 'artifacts', `com.example.goecho-${goos}-${goarch}.zip`));
    const names = zip.getEntries().map((e) => e.entryName);
    expect(names).toEqual(goos === 'windows' ? ['goecho.exe', 'manifest.json'] : ['goecho', 'manifest.json']);
    const packed = JSON.parse(zip.readAsText('manifest.json'));
    expect(packed.transport.stdio.command).toBe(goos === 'windows' ? 'goecho.exe' : './goecho');
    expect(packed.supportedPlatforms).toHaveLength(1);
  }, 300_000);

  it('refuses Node-only options and --goos outside a Go project', async () => {
    expect(await run(['init', 'y', '--lang', 'go', '--intercepts'], io(root))).toBe(2);
    const out = io(root);
    expect(await run(['pack', root, '--goos', 'linux'], out)).toBe(2);
    expect(out.lines.join('\n')).toMatch(/--goos and --goarch apply to Go projects only/);
  });

  it('names the module after the plugin id, turned around, ending with the executable', () => {
    expect(goModulePath('com.example.go-echo')).toBe('example.com/go-echo');
    expect(goModulePath('dev.acme.tools.weather')).toBe('tools.acme.dev/weather');
    expect(goModulePath('acme.bot')).toBe('acme/bot');
  });

  it('names the same SDK version as the Go SDK itself', () => {
    expect(goSdkSourceVersion()).toBe(GO_SDK_VERSION);
  });

  it('reports a missing toolchain with its code', async () => {
    expect(await run(['init', 'go-two', '--lang', 'go'], io(root))).toBe(0);
    const previous = process.env['HOST_PLUGIN_GO'];
    process.env['HOST_PLUGIN_GO'] = join(root, 'no-such-go');
    try {
      const packOut = io(root);
      expect(await run(['pack', join(root, 'go-two')], packOut)).toBe(1);
      expect(packOut.lines.join('\n')).toMatch(/error GO_NOT_FOUND/);
    } finally {
      if (previous === undefined) delete process.env['HOST_PLUGIN_GO'];
      else process.env['HOST_PLUGIN_GO'] = previous;
    }
  });
});

describe('the Go toolchain lookup (@host/plugin-sdk-go/toolchain)', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'go-toolchain-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  /** A stand-in `go` that only answers `go version` with the given version (a shell script). */
  function fakeGo(version: string): string {
    const file = join(root, `go-${version}`);
    writeFileSync(file, `#!/bin/sh\necho "go version go${version} linux/amd64"\n`);
    chmodSync(file, 0o755);
    return file;
  }

  it('claims the same oldest Go as the go line of the SDK module', () => {
    const goMod = readFileSync(join(__dirname, '../../../libs/plugin-sdk-go/go.mod'), 'utf8');
    expect(/^go (\d+)\.(\d+)/m.exec(goMod)?.slice(1).map(Number)).toEqual([...MIN_GO]);
  });

  it('finds a Go at least that old on this machine', () => {
    const version = spawnSync(findGoToolchain(), ['version'], { encoding: 'utf8', env: goEnv }).stdout;
    const [major, minor] = /go(\d+)\.(\d+)/.exec(version)!.slice(1).map(Number);
    expect(major! > MIN_GO[0] || (major === MIN_GO[0] && minor! >= MIN_GO[1])).toBe(true);
  });

  it('uses an explicit choice, and refuses one that is too old or does not run, naming it', () => {
    const ok = fakeGo(`${MIN_GO[0]}.${MIN_GO[1]}.4`);
    expect(findGoToolchain({ env: { PATH: '', HOST_PLUGIN_GO: ok } })).toBe(ok);
    expect(findGoToolchain({ env: { PATH: '', GO: ok } })).toBe(ok);
    const old = fakeGo('1.19.8');
    expect(() => findGoToolchain({ env: { PATH: '', GO: old } })).toThrow(GoToolchainError);
    expect(() => findGoToolchain({ env: { PATH: '', GO: old } })).toThrow(/is go1\.19; the Go SDK needs go1\.\d+ or newer/);
    expect(() => findGoToolchain({ env: { PATH: '', HOST_PLUGIN_GO: join(root, 'none') } })).toThrow(/does not run as a Go toolchain/);
  });

  it('skips an old go on PATH and says what it found when nothing is new enough', () => {
    const old = fakeGo('1.19.8');
    const bin = join(root, 'bin');
    mkdirSync(bin, { recursive: true });
    copyFileSync(old, join(bin, 'go'));
    try {
      const found = findGoToolchain({ env: { PATH: bin }, min: [1, 99] });
      throw new Error(`found ${found}`);
    } catch (error) {
      expect(error).toBeInstanceOf(GoToolchainError);
      expect((error as Error).message).toMatch(/Go 1\.99 or newer is needed/);
      expect((error as Error).message).toContain('go (go1.19)');
    }
    expect(findGoToolchain({ env: { PATH: bin }, min: [1, 19] })).toBe('go');
    // With `oldest`, the oldest acceptable one is taken even when a newer one comes first.
    const newer = join(root, 'newer');
    mkdirSync(newer, { recursive: true });
    copyFileSync(fakeGo('1.99.1'), join(newer, 'go'));
    expect(findGoToolchain({ env: { PATH: newer }, min: [1, 19] })).toBe('go');
    expect(findGoToolchain({ env: { PATH: newer }, min: [1, 19], oldest: true })).not.toBe('go');
  });
});
