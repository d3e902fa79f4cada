import { parseStdioManifest, type StdioManifest } from '@host/protocol';
import { checkPlatform, hostPlatform } from './package-checks';
import { inspectPackage } from './inspect';
import { DEFAULT_INSTALL_LIMITS } from './limits';
import { testManifest, testPackage } from './testing/zip-writer';

function manifest(overrides: Record<string, unknown>): StdioManifest {
  const r = parseStdioManifest(testManifest(overrides));
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.value;
}

describe('checkPlatform', () => {
  const linuxX64 = { platform: 'linux', architecture: 'x64' };

  it('maps Node names to manifest names', () => {
    expect(hostPlatform('win32', 'ia32')).toEqual({ platform: 'windows', architecture: 'x86' });
    expect(hostPlatform('darwin', 'arm64')).toEqual({ platform: 'osx', architecture: 'arm64' });
    expect(hostPlatform('linux', 'x64')).toEqual(linuxX64);
  });

  it('accepts a package without supportedPlatforms, or one listing this host', () => {
    expect(() => checkPlatform(manifest({}), linuxX64)).not.toThrow();
    expect(() => checkPlatform(manifest({ supportedPlatforms: [{ platform: 'linux' }] }), linuxX64)).not.toThrow();
    expect(() =>
      checkPlatform(manifest({ supportedPlatforms: [{ platform: 'linux', architectures: ['arm64', 'x64'] }] }), linuxX64),
    ).not.toThrow();
  });

  it('refuses a package built for another system and names both', () => {
    const m = manifest({ supportedPlatforms: [{ platform: 'windows', architectures: ['x64'] }] });
    expect(() => checkPlatform(m, linuxX64)).toThrow(
      expect.objectContaining({ code: 'INSTALL_PLATFORM_UNSUPPORTED', message: expect.stringMatching(/windows \(x64\).*linux \(x64\)/) }),
    );
    const arm = manifest({ supportedPlatforms: [{ platform: 'linux', architectures: ['arm64'] }] });
    expect(() => checkPlatform(arm, linuxX64)).toThrow(expect.objectContaining({ code: 'INSTALL_PLATFORM_UNSUPPORTED' }));
  });
});

describe('dependencies of a Node package', () => {
  const pkgJson = (dependencies: Record<string, string>) => ({ name: 'dice', data: JSON.stringify({ name: 'dice', dependencies }) });
  const inspect = (extra: { name: string; data?: string }[], manifestOverrides: Record<string, unknown> = {}) =>
    inspectPackage(
      testPackage({ manifest: testManifest(manifestOverrides), extra: extra.map((e) => ({ name: e.name, data: e.data ?? '' })) }),
      DEFAULT_INSTALL_LIMITS,
    );

  it('refuses a package whose package.json dependencies are not in its node_modules, and names them', () => {
    const deps = { '@host/plugin-sdk-v2': '^2.0.0', 'left-pad': '1.0.0' };
    expect(() =>
      inspect([
        { ...pkgJson(deps), name: 'package.json' },
        { name: 'node_modules/left-pad/package.json', data: '{}' },
      ]),
    ).toThrow(
      expect.objectContaining({
        code: 'INSTALL_DEPENDENCY_MISSING',
        message: expect.stringContaining('@host/plugin-sdk-v2'),
        details: expect.objectContaining({ missing: ['@host/plugin-sdk-v2'] }),
      }),
    );
  });

  it('accepts a package that ships its dependencies, one without package.json, and a command that is not node', () => {
    const deps = { '@host/plugin-sdk-v2': '^2.0.0' };
    expect(() =>
      inspect([
        { ...pkgJson(deps), name: 'package.json' },
        { name: 'node_modules/@host/plugin-sdk-v2/package.json', data: '{}' },
      ]),
    ).not.toThrow();
    expect(() => inspect([])).not.toThrow();
    const python = { transport: { type: 'stdio-jsonrpc', stdio: { command: 'python3', args: ['index.js', '--host-stdio'] } } };
    expect(() => inspect([{ ...pkgJson(deps), name: 'package.json' }], python)).not.toThrow();
  });
});
