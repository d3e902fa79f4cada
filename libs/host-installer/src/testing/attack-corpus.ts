import { randomBytes } from 'node:crypto';
import type { InstallLimits } from '../limits';
import { hostPlatform } from '../package-checks';
import { buildZip, testManifest, testPackage, type ZipEntrySpec } from './zip-writer';

const manifestEntry = (overrides: Record<string, unknown> = {}, name = 'manifest.json'): ZipEntrySpec => ({
  name,
  data: JSON.stringify(testManifest(overrides)),
});
const index: ZipEntrySpec = { name: 'index.js', data: 'console.error(1);\n' };
/** A valid package plus one hostile entry. */
const withEntry = (e: ZipEntrySpec) => buildZip([manifestEntry(), index, e]);

/** One hostile archive and the error code the installer must refuse it with. */
export interface AttackCase {
  name: string;
  code: string;
  archive: () => Buffer;
  limits?: Partial<InstallLimits>;
}

/** Archives an attacker could upload, each with the code it is refused with; the installer's tests and its reader benchmark use them. */
export const ATTACK_CORPUS: AttackCase[] = [
  // Traversal in every spelling
  { name: 'parent segment at the start', code: 'INSTALL_PATH_TRAVERSAL', archive: () => withEntry({ name: '../evil.js', data: 'x' }) },
  {
    name: 'parent segments after a folder',
    code: 'INSTALL_PATH_TRAVERSAL',
    archive: () => withEntry({ name: 'lib/../../evil.js', data: 'x' }),
  },
  { name: 'deep climb', code: 'INSTALL_PATH_TRAVERSAL', archive: () => withEntry({ name: 'a/b/../../../../etc/cron.d/x', data: 'x' }) },
  { name: 'dot then parent', code: 'INSTALL_PATH_TRAVERSAL', archive: () => withEntry({ name: './../evil.js', data: 'x' }) },
  { name: 'parent folder entry', code: 'INSTALL_PATH_TRAVERSAL', archive: () => withEntry({ name: '../' }) },
  { name: 'parent segment at the end', code: 'INSTALL_PATH_TRAVERSAL', archive: () => withEntry({ name: 'lib/..', data: 'x' }) },
  { name: 'backslash traversal', code: 'INSTALL_BACKSLASH_PATH', archive: () => withEntry({ name: '..\\evil.js', data: 'x' }) },
  {
    name: 'backslash deep traversal',
    code: 'INSTALL_BACKSLASH_PATH',
    archive: () => withEntry({ name: 'lib\\..\\..\\evil.js', data: 'x' }),
  },
  { name: 'mixed separators', code: 'INSTALL_BACKSLASH_PATH', archive: () => withEntry({ name: 'lib/..\\../evil.js', data: 'x' }) },
  // Absolute and drive paths
  { name: 'absolute path', code: 'INSTALL_ABSOLUTE_PATH', archive: () => withEntry({ name: '/etc/passwd', data: 'x' }) },
  { name: 'UNC-style path', code: 'INSTALL_ABSOLUTE_PATH', archive: () => withEntry({ name: '//server/share/evil.js', data: 'x' }) },
  { name: 'drive letter with slash', code: 'INSTALL_ABSOLUTE_PATH', archive: () => withEntry({ name: 'C:/Windows/evil.dll', data: 'x' }) },
  { name: 'drive-relative path', code: 'INSTALL_ABSOLUTE_PATH', archive: () => withEntry({ name: 'c:evil.js', data: 'x' }) },
  { name: 'drive letter with backslash', code: 'INSTALL_BACKSLASH_PATH', archive: () => withEntry({ name: 'C:\\evil.js', data: 'x' }) },
  // Links and special files
  {
    name: 'symlink to an absolute path',
    code: 'INSTALL_LINK_ENTRY',
    archive: () => withEntry({ name: 'passwd', data: '/etc/passwd', unixMode: 0o120777 }),
  },
  {
    name: 'symlink climbing out',
    code: 'INSTALL_LINK_ENTRY',
    archive: () => withEntry({ name: 'up', data: '../../..', unixMode: 0o120755 }),
  },
  {
    name: 'symlink folder then a file through it',
    code: 'INSTALL_LINK_ENTRY',
    archive: () => buildZip([manifestEntry(), index, { name: 'lnk', data: '/tmp', unixMode: 0o120777 }, { name: 'lnk/x', data: 'x' }]),
  },
  {
    name: 'Windows reparse point',
    code: 'INSTALL_LINK_ENTRY',
    archive: () => withEntry({ name: 'junction', data: 'x', externalAttr: 0x400 }),
  },
  { name: 'character device', code: 'INSTALL_SPECIAL_ENTRY', archive: () => withEntry({ name: 'tty', unixMode: 0o020666 }) },
  { name: 'block device', code: 'INSTALL_SPECIAL_ENTRY', archive: () => withEntry({ name: 'sda', unixMode: 0o060660 }) },
  { name: 'FIFO', code: 'INSTALL_SPECIAL_ENTRY', archive: () => withEntry({ name: 'pipe', unixMode: 0o010644 }) },
  { name: 'socket', code: 'INSTALL_SPECIAL_ENTRY', archive: () => withEntry({ name: 'sock', unixMode: 0o140755 }) },
  // Duplicates and collisions
  { name: 'the same file twice', code: 'INSTALL_DUPLICATE_ENTRY', archive: () => withEntry({ name: 'index.js', data: 'other' }) },
  {
    name: 'the same file twice via "./"',
    code: 'INSTALL_DUPLICATE_ENTRY',
    archive: () => withEntry({ name: './index.js', data: 'other' }),
  },
  {
    name: 'a file that is also a folder',
    code: 'INSTALL_DUPLICATE_ENTRY',
    archive: () => buildZip([manifestEntry(), index, { name: 'lib', data: 'x' }, { name: 'lib/a.js', data: 'x' }]),
  },
  { name: 'names differing in case', code: 'INSTALL_CASE_COLLISION', archive: () => withEntry({ name: 'INDEX.js', data: 'x' }) },
  {
    name: 'folders differing in case',
    code: 'INSTALL_CASE_COLLISION',
    archive: () => buildZip([manifestEntry(), index, { name: 'Lib/a.js', data: 'x' }, { name: 'lib/b.js', data: 'x' }]),
  },
  {
    name: 'NFC and NFD spellings',
    code: 'INSTALL_CASE_COLLISION',
    archive: () => buildZip([manifestEntry(), index, { name: 'caf\u00e9.txt', data: 'x' }, { name: 'cafe\u0301.txt', data: 'y' }]),
  },
  // Case-insensitive file systems fold case with upper-case tables: "ſ" and "µ" do not lower-case to "s" and "μ" but upper-case to "S" and "Μ".
  { name: 'long s and s', code: 'INSTALL_CASE_COLLISION', archive: () => withEntry({ name: 'index.j\u017f', data: 'x' }) },
  {
    name: 'final and medial sigma',
    code: 'INSTALL_CASE_COLLISION',
    archive: () => buildZip([manifestEntry(), index, { name: '\u03b1\u03c2.txt', data: 'x' }, { name: '\u03b1\u03c3.txt', data: 'y' }]),
  },
  {
    name: 'micro sign and mu',
    code: 'INSTALL_CASE_COLLISION',
    archive: () => buildZip([manifestEntry(), index, { name: '\u00b5/a.js', data: 'x' }, { name: '\u03bc/b.js', data: 'y' }]),
  },
  // Bad names
  { name: 'NUL in a name', code: 'INSTALL_INVALID_ENTRY_NAME', archive: () => withEntry({ name: 'index.js\u0000.png', data: 'x' }) },
  { name: 'newline in a name', code: 'INSTALL_INVALID_ENTRY_NAME', archive: () => withEntry({ name: 'a\nb.js', data: 'x' }) },
  { name: 'empty name', code: 'INSTALL_INVALID_ENTRY_NAME', archive: () => withEntry({ name: '', data: 'x' }) },
  {
    name: 'name that is not UTF-8',
    code: 'INSTALL_INVALID_ENTRY_NAME',
    archive: () => withEntry({ name: Buffer.from([0x66, 0xff, 0xfe, 0x2e, 0x6a, 0x73]), data: 'x', flags: 0 }),
  },
  {
    name: 'alternate data stream name',
    code: 'INSTALL_INVALID_ENTRY_NAME',
    archive: () => withEntry({ name: 'index.js:evil', data: 'x' }),
  },
  // Encryption and compression
  { name: 'encrypted entry', code: 'INSTALL_ENCRYPTED_ENTRY', archive: () => withEntry({ name: 'secret.js', data: 'x', flags: 0x801 }) },
  { name: 'AES entry', code: 'INSTALL_ENCRYPTED_ENTRY', archive: () => withEntry({ name: 'secret.js', data: 'x', method: 99 }) },
  { name: 'bzip2 entry', code: 'INSTALL_UNSUPPORTED_COMPRESSION', archive: () => withEntry({ name: 'a.bin', data: 'x', method: 12 }) },
  // Bombs
  {
    name: 'bomb by ratio (honest header)',
    code: 'INSTALL_COMPRESSION_RATIO',
    archive: () => withEntry({ name: 'zeros.bin', data: Buffer.alloc(50 * 1024 * 1024) }),
  },
  {
    name: 'bomb by count',
    code: 'INSTALL_TOO_MANY_ENTRIES',
    archive: () => buildZip([manifestEntry(), index, ...Array.from({ length: 20_000 }, (_, i) => ({ name: `f/${i}`, method: 0 }))]),
  },
  {
    // Parsing a central directory costs kilobytes of heap per entry, so the count is refused from the end record, before any entry is read.
    name: 'bomb by count, judged from the end record before parsing',
    code: 'INSTALL_TOO_MANY_ENTRIES',
    limits: { maxEntries: 2 },
    archive: () => {
      const zip = buildZip([manifestEntry(), index, { name: 'a.js', data: 'x' }]);
      zip.writeUInt16LE(50_000, zip.length - 22 + 8);
      zip.writeUInt16LE(50_000, zip.length - 22 + 10);
      return zip;
    },
  },
  {
    name: 'bomb by declared total',
    code: 'INSTALL_TOO_LARGE_UNPACKED',
    limits: { maxUnpackedBytes: 1024 * 1024 },
    archive: () => withEntry({ name: 'big.bin', data: randomBytes(1536 * 1024) }),
  },
  {
    name: 'bomb hiding behind a small declared size',
    code: 'INSTALL_ENTRY_CORRUPT',
    archive: () => withEntry({ name: 'liar.bin', data: Buffer.alloc(30 * 1024 * 1024), declaredSize: 1000 }),
  },
  {
    name: 'many entries each under the ratio, over the total',
    code: 'INSTALL_TOO_LARGE_UNPACKED',
    limits: { maxUnpackedBytes: 3 * 1024 * 1024 },
    archive: () =>
      buildZip([
        manifestEntry(),
        index,
        ...Array.from({ length: 4 }, (_, i) => ({ name: `chunk${i}.bin`, data: randomBytes(1024 * 1024) })),
      ]),
  },
  {
    // 1 MiB of random data stored once, named by 500 central records: 500 MiB on disk if each were unpacked.
    name: 'overlapping entries (one local file, many names)',
    code: 'INSTALL_OVERLAPPING_ENTRIES',
    archive: () =>
      buildZip([
        manifestEntry(),
        index,
        { name: 'data/0.bin', data: randomBytes(1024 * 1024), method: 0 },
        ...Array.from({ length: 500 }, (_, i) => ({ name: `data/${i + 1}.bin`, sharesDataWith: 2 })),
      ]),
  },
  {
    // A local header hidden inside another entry's stored data, with a central record pointing at it.
    name: 'an entry starting inside the data of another',
    code: 'INSTALL_OVERLAPPING_ENTRIES',
    archive: () => {
      const inner = buildZip([{ name: 'b.bin', data: 'x', method: 0 }]).subarray(0, 30 + 'b.bin'.length + 1);
      const outer = Buffer.concat([randomBytes(100), inner, randomBytes(100)]);
      const zip = buildZip([manifestEntry(), index, { name: 'a.bin', data: outer, method: 0 }, { name: 'b.bin', data: 'x', method: 0 }]);
      // The fourth central record (b.bin) is pointed at the header inside a.bin's data.
      let at = zip.readUInt32LE(zip.length - 22 + 16);
      const offsets: number[] = [];
      for (let i = 0; i < 4; i++) {
        offsets.push(zip.readUInt32LE(at + 42));
        at += 46 + zip.readUInt16LE(at + 28) + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
      }
      at = zip.readUInt32LE(zip.length - 22 + 16);
      for (let i = 0; i < 3; i++) at += 46 + zip.readUInt16LE(at + 28) + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
      zip.writeUInt32LE(offsets[2]! + 30 + 'a.bin'.length + 100, at + 42);
      return zip;
    },
  },
  { name: 'wrong CRC-32', code: 'INSTALL_ENTRY_CORRUPT', archive: () => withEntry({ name: 'a.js', data: 'hello', declaredCrc: 1234 }) },
  {
    name: 'garbage deflate data',
    code: 'INSTALL_ENTRY_CORRUPT',
    archive: () => withEntry({ name: 'a.js', data: 'hello', rawBody: Buffer.alloc(16, 0xff) }),
  },
  // Not an archive
  { name: 'not a ZIP at all', code: 'INSTALL_NOT_A_ZIP', archive: () => randomBytes(4096) },
  { name: 'truncated ZIP', code: 'INSTALL_NOT_A_ZIP', archive: () => testPackage().subarray(0, 60) },
  // Layout
  { name: 'no manifest', code: 'INSTALL_MANIFEST_MISSING', archive: () => buildZip([index]) },
  {
    name: 'manifest nested too deep',
    code: 'INSTALL_MANIFEST_MISSING',
    archive: () => buildZip([manifestEntry({}, 'com.example.echo/src/manifest.json'), { name: 'com.example.echo/index.js', data: 'x' }]),
  },
  {
    name: 'two top-level folders',
    code: 'INSTALL_LAYOUT_AMBIGUOUS',
    archive: () =>
      buildZip([
        manifestEntry({}, 'com.example.echo/manifest.json'),
        { name: 'com.example.echo/index.js', data: 'x' },
        { name: 'other/x.js', data: 'x' },
      ]),
  },
  {
    name: 'a file beside the plugin folder',
    code: 'INSTALL_LAYOUT_AMBIGUOUS',
    archive: () =>
      buildZip([
        manifestEntry({}, 'com.example.echo/manifest.json'),
        { name: 'com.example.echo/index.js', data: 'x' },
        { name: 'README.md', data: 'x' },
      ]),
  },
  {
    name: 'folder named differently from the plugin id',
    code: 'INSTALL_FOLDER_MISMATCH',
    archive: () => buildZip([manifestEntry({}, 'echo-plugin/manifest.json'), { name: 'echo-plugin/index.js', data: 'x' }]),
  },
  // Manifest and package rules
  {
    name: 'manifest is not JSON',
    code: 'INSTALL_MANIFEST_INVALID_JSON',
    archive: () => buildZip([{ name: 'manifest.json', data: '{"pluginId": ' }, index]),
  },
  { name: 'protocol version 1', code: 'INSTALL_MANIFEST_INVALID', archive: () => buildZip([manifestEntry({ protocolVersion: 1 }), index]) },
  {
    name: 'pluginId unsafe as a folder name',
    code: 'INSTALL_MANIFEST_INVALID',
    archive: () => buildZip([manifestEntry({ pluginId: '../../etc' }), index]),
  },
  {
    name: 'oversized manifest',
    code: 'INSTALL_MANIFEST_INVALID',
    archive: () => buildZip([manifestEntry({ description: 'x'.repeat(300 * 1024) }), index]),
  },
  {
    name: 'HTTP plugin manifest',
    code: 'INSTALL_TRANSPORT_UNSUPPORTED',
    archive: () =>
      buildZip([
        {
          name: 'manifest.json',
          data: JSON.stringify({
            pluginId: 'com.example.echo',
            name: 'E',
            version: '1.0.0',
            author: 'A',
            protocolVersion: 2,
            capabilities: 9,
          }),
        },
      ]),
  },
  {
    name: 'non-stdio transport type',
    code: 'INSTALL_TRANSPORT_UNSUPPORTED',
    archive: () => buildZip([manifestEntry({ transport: { type: 'http' } }), index]),
  },
  { name: 'missing entry script', code: 'INSTALL_ENTRY_MISSING', archive: () => buildZip([manifestEntry()]) },
  {
    name: 'missing native command',
    code: 'INSTALL_ENTRY_MISSING',
    archive: () =>
      buildZip([
        manifestEntry({ transport: { type: 'stdio-jsonrpc', stdio: { command: './bin/plugin', args: ['--host-stdio'] } } }),
        index,
      ]),
  },
  {
    name: 'command climbing out',
    code: 'INSTALL_ENTRY_MISSING',
    archive: () => buildZip([manifestEntry({ transport: { type: 'stdio-jsonrpc', stdio: { command: '../../bin/sh', args: [] } } }), index]),
  },
  {
    name: 'built for another platform',
    code: 'INSTALL_PLATFORM_UNSUPPORTED',
    archive: () =>
      buildZip([
        manifestEntry({ supportedPlatforms: [{ platform: process.platform === 'win32' ? 'osx' : 'windows', architectures: ['x64'] }] }),
        index,
      ]),
  },
  {
    name: 'built for another architecture',
    code: 'INSTALL_PLATFORM_UNSUPPORTED',
    archive: () =>
      buildZip([
        manifestEntry({
          supportedPlatforms: [{ platform: hostPlatform().platform, architectures: [process.arch === 'arm64' ? 'x64' : 'arm64'] }],
        }),
        index,
      ]),
  },
  {
    name: 'working directory outside',
    code: 'INSTALL_WORKDIR_OUTSIDE',
    archive: () =>
      buildZip([
        manifestEntry({ transport: { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['index.js'], workingDirectory: '../' } } }),
        index,
      ]),
  },
  {
    name: 'absolute working directory',
    code: 'INSTALL_WORKDIR_OUTSIDE',
    archive: () =>
      buildZip([
        manifestEntry({ transport: { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['index.js'], workingDirectory: '/tmp' } } }),
        index,
      ]),
  },
  {
    name: 'missing working directory',
    code: 'INSTALL_WORKDIR_MISSING',
    archive: () =>
      buildZip([
        manifestEntry({ transport: { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['index.js'], workingDirectory: 'dist' } } }),
        index,
      ]),
  },
];
