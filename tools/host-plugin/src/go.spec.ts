import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AdmZip from 'adm-zip';
import { run } from './cli';
import { findGo, GO_SDK_VERSION, goSdkSourceVersion, isGoProject } from './go';
import type { CliIO } from './io';

function io(cwd: string): CliIO & { lines: string[] } {
  const lines: string[] = [];
  return { cwd, lines, out: (t) => void lines.push(t), err: (t) => void lines.push(t), interactive: false, ask: async () => '' };
}

const goEnv = { ...process.env, GOTOOLCHAIN: 'local', GOPROXY: 'off', GOFLAGS: '-mod=mod' };

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
    expect(tests.stdout + tests.stderr).toMatch(/^ok\s+com\.example\.goecho/m);
    expect(tests.status).toBe(0);

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
