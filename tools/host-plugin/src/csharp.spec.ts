import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AdmZip from 'adm-zip';
import { run } from './cli';
import { csharpAssemblyName, csharpSdkFeed, CSHARP_SDK_VERSION, isCsharpProject } from './csharp';
import { CliError } from './errors';
import type { CliIO } from './io';

function io(cwd: string): CliIO & { lines: string[] } {
  const lines: string[] = [];
  return { cwd, lines, out: (t) => void lines.push(t), err: (t) => void lines.push(t), interactive: false, ask: async () => '' };
}

const dotnetEnv = { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1' };

describe('host-plugin init --lang csharp', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'host-plugin-csharp-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('names the assembly after the last segment of the plugin id', () => {
    expect(csharpAssemblyName('com.example.csecho')).toBe('Csecho');
    expect(csharpAssemblyName('com.example.csharp-echo')).toBe('CsharpEcho');
    expect(csharpAssemblyName('com.example.my_bot2')).toBe('MyBot2');
    expect(csharpAssemblyName('com.example.x-9')).toBe('X9');
  });

  it('scaffolds a project whose own tests pass and that `host-plugin pack` packs with dotnet publish', async () => {
    const out = io(root);
    expect(await run(['init', 'cs-echo', '--lang', 'csharp', '--id', 'com.example.cs-echo', '--author', 'Me'], out)).toBe(0);
    const dir = join(root, 'cs-echo');
    for (const file of [
      'manifest.json',
      'CsEcho.csproj',
      'EchoPlugin.cs',
      'Program.cs',
      'nuget.config',
      'tests/CsEcho.Tests/CsEcho.Tests.csproj',
      'tests/CsEcho.Tests/EchoPluginTests.cs',
      `packages/HostSdk.${CSHARP_SDK_VERSION}.nupkg`,
    ]) {
      expect({ file, exists: existsSync(join(dir, file)) }).toEqual({ file, exists: true });
    }
    expect(isCsharpProject(dir)).toBe(true);
    expect(out.lines.join('\n')).toMatch(/dotnet publish -c Release/);

    const tests = spawnSync('dotnet', ['test', 'tests/CsEcho.Tests'], { cwd: dir, encoding: 'utf8', env: dotnetEnv });
    expect(tests.stdout + tests.stderr).toMatch(/Passed!\s+- Failed:\s+0, Passed:\s+6\b/);
    expect(tests.status).toBe(0);

    expect(await run(['pack', dir], io(root))).toBe(0);
    const zip = new AdmZip(join(dir, 'artifacts', 'CsEcho.zip'));
    const names = zip.getEntries().map((e) => e.entryName);
    expect(names[0]).toBe('manifest.json');
    expect(names).toEqual(expect.arrayContaining(['CsEcho.dll', 'CsEcho.deps.json', 'CsEcho.runtimeconfig.json', 'HostSdk.dll']));
    // Nothing of the tests, the feed or earlier ZIPs goes into the package.
    expect(names.filter((n) => /Tests|xunit|nupkg|\.zip$/i.test(n))).toEqual([]);
    const packed = JSON.parse(zip.readAsText('manifest.json'));
    expect(packed.transport.stdio).toEqual({ command: 'dotnet', args: ['CsEcho.dll', '--host-stdio'], workingDirectory: '.' });

    // --out puts the ZIP elsewhere (HostPluginPackagePath), with the same bytes.
    expect(await run(['pack', dir, '--out', join(root, 'elsewhere')], io(root))).toBe(0);
    expect(readFileSync(join(root, 'elsewhere', 'CsEcho.zip'))).toEqual(readFileSync(join(dir, 'artifacts', 'CsEcho.zip')));
  }, 300_000);

  it('refuses Node-only and Go-only options in a C# project', async () => {
    expect(await run(['init', 'y', '--lang', 'csharp', '--intercepts'], io(root))).toBe(2);
    const dir = join(root, 'cs-echo');
    const goos = io(root);
    expect(await run(['pack', dir, '--goos', 'linux'], goos)).toBe(2);
    expect(goos.lines.join('\n')).toMatch(/--goos and --goarch apply to Go projects only/);
    const include = io(root);
    expect(await run(['pack', dir, '--include', 'x'], include)).toBe(2);
    expect(include.lines.join('\n')).toMatch(/--include applies to Node\.js projects/);
  });

  it('names the same SDK version as HostSdk.csproj', () => {
    const csproj = readFileSync(join(__dirname, '../../../libs/plugin-sdk-csharp/src/HostSdk/HostSdk.csproj'), 'utf8');
    expect(/<Version>([^<]+)<\/Version>/.exec(csproj)?.[1]).toBe(CSHARP_SDK_VERSION);
  });

  it('reports a CLI without the HostSdk package beside it with its code', () => {
    const missing = (() => {
      try {
        csharpSdkFeed(join(root, 'no-checkout', 'tools', 'host-plugin', 'dist'));
        return undefined;
      } catch (error) {
        return error;
      }
    })();
    expect(missing).toBeInstanceOf(CliError);
    expect((missing as CliError).code).toBe('CSHARP_SDK_MISSING');
  });

  it('reports a missing dotnet with its code', async () => {
    const previous = process.env['HOST_PLUGIN_DOTNET'];
    process.env['HOST_PLUGIN_DOTNET'] = join(root, 'no-such-dotnet');
    try {
      const packOut = io(root);
      expect(await run(['pack', join(root, 'cs-echo')], packOut)).toBe(1);
      expect(packOut.lines.join('\n')).toMatch(/error DOTNET_NOT_FOUND/);
    } finally {
      if (previous === undefined) delete process.env['HOST_PLUGIN_DOTNET'];
      else process.env['HOST_PLUGIN_DOTNET'] = previous;
    }
  });
});
