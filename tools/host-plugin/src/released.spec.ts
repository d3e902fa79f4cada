import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import AdmZip from 'adm-zip';
import { csharpAssemblyName, CSHARP_SDK_VERSION } from './csharp';

// The CLI as npm publishes it (`npm pack` of the built tools/host-plugin), installed into an empty folder outside
// this repository: `init --lang python|go|csharp` must find the SDKs inside the package (dist/sdk, written by
// the build), and `pack` in each scaffolded project must work with nothing but the package and the language's
// toolchain. The C# part restores HostSdk from the .nupkg init copied (the rest from the NuGet cache or feed).
const CLI_DIR = resolve(__dirname, '..');
const env = { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1', npm_config_update_notifier: 'false' };

let root: string;
let bin: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'host-plugin-released-'));
  const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', root], { cwd: CLI_DIR, encoding: 'utf8', env }).trim();
  const user = join(root, 'user');
  mkdirSync(user);
  writeFileSync(join(user, 'package.json'), JSON.stringify({ name: 'user', private: true }));
  // The package has no dependencies (everything is bundled), so installing the tarball needs no registry.
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', join(root, tarball.split('\n').pop()!)], { cwd: user, env });
  bin = user;
}, 120_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

function hostPlugin(cwd: string, args: string[]): { status: number | null; output: string } {
  const r = spawnSync('npx', ['--offline', 'host-plugin', ...args], { cwd, encoding: 'utf8', env });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('the released CLI, installed from its npm tarball outside the repository', () => {
  it('carries the SDKs in the package and nothing of the checkout', () => {
    const pkg = join(bin, 'node_modules', '@host', 'host-plugin');
    for (const file of [
      'dist/cli.cjs',
      'dist/sdk/python/host_sdk_v2/pack.py',
      'dist/sdk/go/sdk-go/go.mod',
      'dist/sdk/go/sdk-go/cmd/host-pack/main.go',
      `dist/sdk/csharp/packages/HostSdk.${CSHARP_SDK_VERSION}.nupkg`,
    ])
      expect({ file, exists: existsSync(join(pkg, file)) }).toEqual({ file, exists: true });
    expect(readdirSync(join(pkg, 'dist/sdk/go/sdk-go/hostsdk/pack')).filter((f) => f.endsWith('_test.go'))).toEqual([]);
  });

  it('scaffolds and packs a Go plugin', () => {
    const init = hostPlugin(bin, ['init', 'go-echo', '--lang', 'go', '--id', 'com.example.released-go']);
    expect(init).toMatchObject({ status: 0 });
    const project = join(bin, 'go-echo');
    const pack = hostPlugin(project, ['pack', '--goos', 'linux', '--goarch', 'amd64']);
    expect({ status: pack.status, output: pack.output }).toMatchObject({ status: 0 });
    const zip = new AdmZip(join(project, 'artifacts', 'com.example.released-go-linux-amd64.zip'));
    expect(zip.getEntries().map((e) => e.entryName)).toEqual(['manifest.json', 'released-go']);
  }, 120_000);

  it('scaffolds and packs a Python plugin', () => {
    expect(hostPlugin(bin, ['init', 'py-echo', '--lang', 'python', '--id', 'com.example.released-py'])).toMatchObject({ status: 0 });
    const project = join(bin, 'py-echo');
    const pack = hostPlugin(project, ['pack']);
    expect({ status: pack.status, output: pack.output }).toMatchObject({ status: 0 });
    const names = new AdmZip(join(project, 'artifacts', 'com.example.released-py.zip')).getEntries().map((e) => e.entryName);
    expect(names).toEqual(expect.arrayContaining(['manifest.json', 'plugin.py', 'host_sdk_v2/pack.py']));
  }, 60_000);

  it('scaffolds and packs a C# plugin', () => {
    expect(hostPlugin(bin, ['init', 'cs-echo', '--lang', 'csharp', '--id', 'com.example.released-cs'])).toMatchObject({ status: 0 });
    const project = join(bin, 'cs-echo');
    expect(existsSync(join(project, 'packages', `HostSdk.${CSHARP_SDK_VERSION}.nupkg`))).toBe(true);
    const pack = hostPlugin(project, ['pack']);
    expect({ status: pack.status, output: pack.output }).toMatchObject({ status: 0 });
    const asm = csharpAssemblyName('com.example.released-cs');
    const names = new AdmZip(join(project, 'artifacts', `${asm}.zip`)).getEntries().map((e) => e.entryName);
    expect(names).toEqual(expect.arrayContaining(['manifest.json', `${asm}.dll`, 'HostSdk.dll']));
  }, 240_000);

  it("reports the packers' refusals of the Go and Python projects with the catalogue codes", () => {
    for (const dir of ['go-echo', 'py-echo', 'cs-echo']) rmSync(join(bin, dir, 'manifest.json'), { force: true });
    expect(hostPlugin(join(bin, 'go-echo'), ['pack']).output).toMatch(/error PACK_MANIFEST_MISSING: /);
    writeFileSync(join(bin, 'py-echo', 'manifest.json'), JSON.stringify({ pluginId: 'com.example.released-py', capabilities: 1 }));
    expect(hostPlugin(join(bin, 'py-echo'), ['pack']).output).toMatch(/error PACK_TRANSPORT_NOT_STDIO: /);
  }, 60_000);
});
