import { HostError, hostPaths } from '@host/host-core';
import { FilePendingUpdateStore, JsonRegistryStore } from '@host/host-store';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readArchive } from './archive';
import { openFileSource } from './archive-source';
import { inspectPackage } from './inspect';
import { PluginInstaller } from './installer';
import { DEFAULT_INSTALL_LIMITS } from './limits';
import { buildZip, createUnavailableRuntime, snapshotTree, testManifest, type ZipEntrySpec } from './testing';

// The ZIP structure as the installer reads it from a file: the end record, the central directory and each local
// header, each malformed or ambiguous form refused with its own code before anything is unpacked.
const manifest: ZipEntrySpec = { name: 'manifest.json', data: JSON.stringify(testManifest()) };
const index: ZipEntrySpec = { name: 'index.js', data: "console.error('hi');\n" };
const pkg = (extra: ZipEntrySpec[] = [], layout?: Parameters<typeof buildZip>[1]) => buildZip([manifest, index, ...extra], layout);

/** Where the end record starts (no comment) and the central directory it names (through the ZIP64 record when marked). */
function layoutOf(zip: Buffer): { end: number; cd: number } {
  const end = zip.length - 22;
  const cd = zip.readUInt32LE(end + 16);
  return { end, cd: cd === 0xffffffff ? Number(zip.readBigUInt64LE(end - 20 - 56 + 48)) : cd };
}

/** Offset of the n-th central record. */
function centralRecord(zip: Buffer, n: number): number {
  let at = layoutOf(zip).cd;
  for (let i = 0; i < n; i++) at += 46 + zip.readUInt16LE(at + 28) + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  return at;
}

function refusal(zip: Buffer): HostError {
  try {
    inspectPackage(zip, DEFAULT_INSTALL_LIMITS);
  } catch (e) {
    if (e instanceof HostError) return e;
    throw e;
  }
  throw new Error('the archive was accepted');
}

const cases: { name: string; code: string; message: RegExp; archive: () => Buffer }[] = [
  {
    name: 'a central directory cut short (its end record names more bytes than lie before it)',
    code: 'INSTALL_NOT_A_ZIP',
    message: /central directory .* runs past its end record/,
    archive: () => {
      const zip = pkg();
      const { end, cd } = layoutOf(zip);
      return Buffer.concat([zip.subarray(0, cd + 30), zip.subarray(end)]);
    },
  },
  {
    name: 'an end record counting more records than the directory holds',
    code: 'INSTALL_NOT_A_ZIP',
    message: /central directory ends inside record 3 of 3/,
    archive: () => {
      const zip = pkg();
      zip.writeUInt16LE(3, zip.length - 22 + 8);
      zip.writeUInt16LE(3, zip.length - 22 + 10);
      return zip;
    },
  },
  {
    name: 'a central record without its signature',
    code: 'INSTALL_NOT_A_ZIP',
    message: /record 2 has no signature/,
    archive: () => {
      const zip = pkg();
      zip.writeUInt32LE(0x12345678, centralRecord(zip, 1));
      return zip;
    },
  },
  {
    name: 'an end record counting fewer records than the directory holds',
    code: 'INSTALL_ZIP_AMBIGUOUS',
    message: /bytes after its 1 records/,
    archive: () => {
      const zip = pkg();
      zip.writeUInt16LE(1, zip.length - 22 + 8);
      zip.writeUInt16LE(1, zip.length - 22 + 10);
      return zip;
    },
  },
  {
    name: 'a comment that hides a second end record',
    code: 'INSTALL_ZIP_AMBIGUOUS',
    message: /comment holds a second end record/,
    archive: () => {
      // A reader scanning backwards for the signature stops at the fake record first, whose comment would
      // be the 2 bytes after it.
      const fake = Buffer.alloc(22);
      fake.writeUInt32LE(0x06054b50, 0);
      fake.writeUInt16LE(2, 20);
      return pkg([], { comment: Buffer.concat([Buffer.from('built by hand '), fake, Buffer.from('..!')]) });
    },
  },
  {
    name: 'two end records whose comments both reach the end of the file',
    code: 'INSTALL_ZIP_AMBIGUOUS',
    message: /2 end records whose comments reach the end/,
    archive: () => {
      const inner = pkg();
      const tail = inner.subarray(inner.length - 22);
      // The outer archive's comment is a whole end record with an empty comment of its own.
      return pkg([], { comment: Buffer.from(tail) });
    },
  },
  {
    name: 'bytes between the central directory and the end record',
    code: 'INSTALL_ZIP_AMBIGUOUS',
    message: /16 bytes lie between its central directory and its end record/,
    archive: () => {
      const zip = pkg();
      const { end } = layoutOf(zip);
      return Buffer.concat([zip.subarray(0, end), Buffer.alloc(16), zip.subarray(end)]);
    },
  },
  {
    name: 'entries whose data runs into the central directory',
    code: 'INSTALL_ENTRY_CORRUPT',
    message: /runs past the entries' data into the central directory/,
    archive: () => {
      const zip = pkg([{ name: 'last.bin', data: 'abc', method: 0 }]);
      const at = centralRecord(zip, 2);
      // Stored, so both sizes grow; the local header says the same, so only the layout is wrong.
      for (const field of [20, 24]) zip.writeUInt32LE(40, at + field);
      const local = zip.readUInt32LE(at + 42);
      for (const field of [18, 22]) zip.writeUInt32LE(40, local + field);
      return zip;
    },
  },
  {
    name: 'a local header naming another file than its central record',
    code: 'INSTALL_ENTRY_CORRUPT',
    message: /disagrees with the central directory on its name/,
    archive: () => {
      const zip = pkg();
      const local = zip.readUInt32LE(centralRecord(zip, 1) + 42);
      zip.write('INDEX', local + 30, 'latin1');
      return zip;
    },
  },
  {
    name: 'a local header with another compression method',
    code: 'INSTALL_ENTRY_CORRUPT',
    message: /disagrees with the central directory on its compression method/,
    archive: () => {
      const zip = pkg([{ name: 'a.txt', data: 'stored', method: 0 }]);
      const local = zip.readUInt32LE(centralRecord(zip, 2) + 42);
      zip.writeUInt16LE(8, local + 8);
      return zip;
    },
  },
  {
    name: 'a local header with another CRC-32',
    code: 'INSTALL_ENTRY_CORRUPT',
    message: /disagrees with the central directory on its CRC-32/,
    archive: () => {
      const zip = pkg();
      const local = zip.readUInt32LE(centralRecord(zip, 1) + 42);
      zip.writeUInt32LE(0xdeadbeef, local + 14);
      return zip;
    },
  },
  {
    name: 'a local header with other sizes (a bomb that lies to the central directory only)',
    code: 'INSTALL_ENTRY_CORRUPT',
    message: /disagrees with the central directory on its sizes/,
    archive: () => {
      const zip = pkg();
      const local = zip.readUInt32LE(centralRecord(zip, 1) + 42);
      zip.writeUInt32LE(500 * 1024 * 1024, local + 22);
      return zip;
    },
  },
  {
    name: 'a local header that is encrypted where the central record is not',
    code: 'INSTALL_ENCRYPTED_ENTRY',
    message: /is encrypted/,
    archive: () => {
      const zip = pkg();
      const local = zip.readUInt32LE(centralRecord(zip, 1) + 42);
      zip.writeUInt16LE(zip.readUInt16LE(local + 6) | 1, local + 6);
      return zip;
    },
  },
  {
    name: 'a central record pointing where there is no local header',
    code: 'INSTALL_NOT_A_ZIP',
    message: /has no local header at offset 3/,
    archive: () => {
      const zip = pkg();
      zip.writeUInt32LE(3, centralRecord(zip, 1) + 42);
      return zip;
    },
  },
  {
    name: 'deflated bytes far more than their declared size could need',
    code: 'INSTALL_ENTRY_CORRUPT',
    message: /holds \d+ compressed bytes for the 10 it declares/,
    archive: () => pkg([{ name: 'padded.bin', data: 'x', rawBody: Buffer.alloc(4096), declaredSize: 10 }]),
  },
  {
    name: 'ZIP64 sizes marked in a central record without a ZIP64 field',
    code: 'INSTALL_NOT_A_ZIP',
    message: /marks its sizes or offset as ZIP64 but has no ZIP64 field/,
    archive: () => {
      const zip = pkg();
      zip.writeUInt32LE(0xffffffff, centralRecord(zip, 1) + 24);
      return zip;
    },
  },
  {
    name: 'a ZIP64 field too short for what the record marks',
    code: 'INSTALL_NOT_A_ZIP',
    message: /no ZIP64 field holding them/,
    archive: () => {
      const zip = pkg([], { zip64: true });
      // The field of the first record says it holds 8 bytes; the other 16 become an unknown field of their own.
      const at = centralRecord(zip, 0);
      const field = at + 46 + zip.readUInt16LE(at + 28);
      zip.writeUInt16LE(8, field + 2);
      zip.writeUInt16LE(0x7777, field + 12);
      zip.writeUInt16LE(12, field + 14);
      return zip;
    },
  },
  {
    name: 'a ZIP64 size beyond any file',
    code: 'INSTALL_NOT_A_ZIP',
    message: /ZIP64 size .* is beyond any file/,
    archive: () => {
      const zip = pkg([], { zip64: true });
      const at = centralRecord(zip, 1);
      zip.writeBigUInt64LE(1n << 60n, at + 46 + zip.readUInt16LE(at + 28) + 4);
      return zip;
    },
  },
  {
    name: 'an end record marked ZIP64 without the ZIP64 end record',
    code: 'INSTALL_NOT_A_ZIP',
    message: /refers to a ZIP64 end record that is missing/,
    archive: () => {
      const zip = pkg();
      zip.writeUInt32LE(0xffffffff, zip.length - 22 + 16);
      return zip;
    },
  },
  {
    name: 'a ZIP64 locator pointing at no ZIP64 end record',
    code: 'INSTALL_NOT_A_ZIP',
    message: /ZIP64 locator points at offset 7/,
    archive: () => {
      const zip = pkg([], { zip64: true });
      zip.writeBigUInt64LE(7n, zip.length - 22 - 20 + 8);
      return zip;
    },
  },
  {
    name: 'an end record and a ZIP64 end record naming different central directories',
    code: 'INSTALL_ZIP_AMBIGUOUS',
    message: /end record and its ZIP64 end record disagree/,
    archive: () => {
      const zip = pkg([], { zip64: true });
      // An unmarked count in the classic record must match the ZIP64 one.
      zip.writeUInt16LE(1, zip.length - 22 + 10);
      zip.writeUInt16LE(1, zip.length - 22 + 8);
      return zip;
    },
  },
  {
    name: 'a ZIP64 entry count over the limit',
    code: 'INSTALL_TOO_MANY_ENTRIES',
    message: /has 5000000 entries/,
    archive: () => {
      const zip = pkg([], { zip64: true });
      const record = zip.length - 22 - 20 - 56;
      zip.writeBigUInt64LE(5_000_000n, record + 24);
      zip.writeBigUInt64LE(5_000_000n, record + 32);
      return zip;
    },
  },
];

describe('the ZIP structure', () => {
  it.each(cases.map((c) => [c.name, c] as const))('refuses %s', (_name, c) => {
    const err = refusal(c.archive());
    expect(err.code).toBe(c.code);
    expect(err.message).toMatch(c.message);
  });

  it('refuses every truncation of a package as not a ZIP', () => {
    const zip = pkg([{ name: 'lib/a.js', data: 'a'.repeat(300) }], { comment: Buffer.from('release 1') });
    for (let length = 0; length < zip.length; length++) {
      expect(refusal(zip.subarray(0, length)).code).toBe('INSTALL_NOT_A_ZIP');
    }
  });

  it('reads an archive written with ZIP64 records and a comment like any other', () => {
    const plain = readArchive(pkg([{ name: 'lib/' }, { name: 'lib/a.js', data: 'a' }]), DEFAULT_INSTALL_LIMITS);
    const wide = readArchive(
      pkg([{ name: 'lib/' }, { name: 'lib/a.js', data: 'a' }], { zip64: true, comment: Buffer.from('PK made by hand') }),
      DEFAULT_INSTALL_LIMITS,
    );
    const shape = (a: typeof plain) => a.entries.map((e) => [e.path, e.isDirectory, e.declaredSize, e.compressedSize, e.crc]);
    expect(shape(wide)).toEqual(shape(plain));
    expect(wide.entries).toHaveLength(4);
  });

  it('reads an archive with bytes before its first entry (a self-extracting stub) when its offsets count them', () => {
    const zip = pkg();
    const stub = Buffer.from('#!/bin/sh\nexit 0\n');
    const shifted = Buffer.concat([stub, zip]);
    const end = shifted.length - 22;
    shifted.writeUInt32LE(shifted.readUInt32LE(end + 16) + stub.length, end + 16);
    for (let n = 0; n < 2; n++) {
      const at = centralRecord(shifted, n);
      shifted.writeUInt32LE(shifted.readUInt32LE(at + 42) + stub.length, at + 42);
    }
    expect(inspectPackage(shifted, DEFAULT_INSTALL_LIMITS).manifest.pluginId).toBe('com.example.echo');
  });
});

describe('an install from a file', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'zip-file-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('unpacks a ZIP64 package with a large stored entry and a large deflated one, byte for byte', async () => {
    const stored = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i + 4 <= stored.length; i += 4) stored.writeUInt32LE((i * 2654435761) >>> 0, i);
    const text = Buffer.from(Array.from({ length: 200_000 }, (_, i) => `line ${i}: ${(i * 7919) % 1_000_003}\n`).join(''));
    const file = join(root, 'upload.zip');
    writeFileSync(
      file,
      pkg(
        [
          { name: 'data/blob.bin', data: stored, method: 0 },
          { name: 'data/text.txt', data: text },
        ],
        { zip64: true },
      ),
    );
    const dataDir = join(root, 'data');
    const store = await JsonRegistryStore.open(hostPaths(dataDir).stateDir);
    try {
      const installer = new PluginInstaller({
        paths: hostPaths(dataDir),
        store,
        pendingUpdates: new FilePendingUpdateStore(join(hostPaths(dataDir).stateDir, 'pending')),
        runtime: createUnavailableRuntime(),
      });
      await installer.init();
      await installer.install({ file });
      const dir = hostPaths(dataDir).packageDir('com.example.echo');
      expect(readFileSync(join(dir, 'data', 'blob.bin')).equals(stored)).toBe(true);
      expect(readFileSync(join(dir, 'data', 'text.txt')).equals(text)).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('refuses a bomb streamed from a file by its ratio, leaving nothing behind', async () => {
    const file = join(root, 'bomb.zip');
    writeFileSync(file, pkg([{ name: 'zeros.bin', data: Buffer.alloc(40 * 1024 * 1024) }]));
    const dataDir = join(root, 'data');
    const store = await JsonRegistryStore.open(hostPaths(dataDir).stateDir);
    try {
      const installer = new PluginInstaller({
        paths: hostPaths(dataDir),
        store,
        pendingUpdates: new FilePendingUpdateStore(join(hostPaths(dataDir).stateDir, 'pending')),
        runtime: createUnavailableRuntime(),
      });
      await installer.init();
      const before = snapshotTree(dataDir);
      await expect(installer.install({ file })).rejects.toMatchObject({ code: 'INSTALL_COMPRESSION_RATIO' });
      expect(snapshotTree(dataDir)).toEqual(before);
    } finally {
      await store.close();
    }
  });

  it('reads the file in ranges: a source closed after the checks cannot be read on', () => {
    const file = join(root, 'small.zip');
    writeFileSync(file, pkg());
    const source = openFileSource(file);
    const plan = inspectPackage(source, DEFAULT_INSTALL_LIMITS);
    source.close();
    expect(plan.files.map((f) => f.path)).toEqual(['manifest.json', 'index.js']);
    expect(() => source.read(0, 4)).toThrow();
  });
});
