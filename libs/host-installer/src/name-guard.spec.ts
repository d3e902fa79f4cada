import { readArchive } from './archive';
import { DEFAULT_INSTALL_LIMITS } from './limits';
import { buildZip, testManifest } from './testing/zip-writer';

// Names are bounded as the central directory is read, before the checks whose
// cost grows with a name's depth (its parent folders) look at them.
const manifest = { name: 'manifest.json', data: JSON.stringify(testManifest()) };
const index = { name: 'index.js', data: 'x' };
const read = (name: string) => () => readArchive(buildZip([manifest, index, { name, data: 'x' }]), DEFAULT_INSTALL_LIMITS);

describe('entry names are bounded as the central directory is read', () => {
  it('refuses a 64 KB name of 32,000 folders by its length, before building folders', () => {
    expect(read(`${'a/'.repeat(32_000)}f`)).toThrow(
      expect.objectContaining({
        code: 'INSTALL_INVALID_ENTRY_NAME',
        message: expect.stringMatching(/has a name of 64001 bytes; at most 1024/),
      }),
    );
  });

  it('refuses a short name nested more than 64 folders deep', () => {
    expect(read(`${'a/'.repeat(65)}f`)).toThrow(
      expect.objectContaining({ code: 'INSTALL_INVALID_ENTRY_NAME', message: expect.stringMatching(/more than 64 folders deep/) }),
    );
  });

  it('accepts 64 levels', () => {
    const archive = read(`${'a/'.repeat(64)}f`)();
    expect(archive.entries.map((e) => e.path)).toContain(`${'a/'.repeat(64)}f`);
  });
});
