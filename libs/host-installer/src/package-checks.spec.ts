import { parseStdioManifest, type StdioManifest } from '@host/protocol';
import { checkPlatform, hostPlatform } from './package-checks';
import { testManifest } from './testing/zip-writer';

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
