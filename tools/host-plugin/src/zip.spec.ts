import AdmZip from 'adm-zip';
import { inflateRawSync } from 'node:zlib';
import { crc32, writeZip } from './zip';

describe('writeZip', () => {
  const entries = [
    { path: 'node_modules/b/index.js', data: Buffer.from('module.exports = 1;\n'.repeat(50)), mode: 0o644 },
    { path: 'bin/run', data: Buffer.from('#!/bin/sh\necho hi\n'), mode: 0o755 },
    { path: 'manifest.json', data: Buffer.from('{}'), mode: 0o644 },
    { path: 'empty.txt', data: Buffer.alloc(0), mode: 0o644 },
    { path: 'dir/ünïcode.txt', data: Buffer.from('x'), mode: 0o644 },
  ];

  it('is read back by a standard reader, entries sorted, times and modes fixed', () => {
    const zip = new AdmZip(writeZip(entries));
    const read = zip
      .getEntries()
      .map((e) => ({ name: e.entryName, data: e.getData().toString(), mode: (e.attr >>> 16) & 0o777, time: e.header.time.getFullYear() }));
    expect(read.map((r) => r.name)).toEqual(['bin/run', 'dir/ünïcode.txt', 'empty.txt', 'manifest.json', 'node_modules/b/index.js']);
    expect(read.map((r) => r.mode)).toEqual([0o755, 0o644, 0o644, 0o644, 0o644]);
    expect(new Set(read.map((r) => r.time))).toEqual(new Set([1980]));
    expect(read[4]?.data).toBe('module.exports = 1;\n'.repeat(50));
  });

  it('gives the same bytes for the same entries in any order', () => {
    expect(writeZip(entries).equals(writeZip([...entries].reverse()))).toBe(true);
  });

  it('deflates what shrinks and stores what does not', () => {
    const buf = writeZip([entries[0] as (typeof entries)[number], { path: 'tiny', data: Buffer.from('a'), mode: 0o644 }]);
    const methods = new AdmZip(buf).getEntries().map((e) => [e.entryName, e.header.method]);
    expect(methods).toEqual([
      ['node_modules/b/index.js', 8],
      ['tiny', 0],
    ]);
    // The first local entry's data inflates back to the original.
    const nameLength = buf.readUInt16LE(26);
    const size = buf.readUInt32LE(18);
    expect(inflateRawSync(buf.subarray(30 + nameLength, 30 + nameLength + size)).toString()).toBe(entries[0]?.data.toString());
  });

  it('computes the standard CRC-32', () => {
    expect(crc32(Buffer.from('123456789')).toString(16)).toBe('cbf43926');
  });
});
