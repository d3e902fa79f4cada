import { crc32 as zlibCrc32, deflateRawSync } from 'node:zlib';
import { CliError } from './errors';

export interface ZipEntry {
  /** POSIX path, relative, no leading slash. */
  path: string;
  data: Buffer;
  /** Unix permission bits: 0o644 or 0o755. */
  mode: number;
}

/** CRC-32 of an entry (zlib's, Node 20.15+). */
export function crc32(data: Buffer): number {
  return zlibCrc32(data) >>> 0;
}

/** 1980-01-01 00:00:00, the earliest DOS date: every entry gets it, so builds do not differ by time. */
const DOS_TIME = 0;
const DOS_DATE = (0 << 9) | (1 << 5) | 1;
const UTF8_NAMES = 0x0800;
const MADE_BY_UNIX = 3 << 8;
const VERSION = 20;
const MAX32 = 0xffffffff;

/**
 * Writes a ZIP archive that depends only on its entries: entries sorted by
 * path (byte order of UTF-8), fixed timestamps, permissions 0644/0755 stored
 * as Unix attributes, no directory entries, no extra fields, and deflate at
 * level 9 (stored when deflate does not shrink a file). The same entries give
 * the same bytes with the same zlib (it ships inside Node.js).
 */
export function writeZip(entries: readonly ZipEntry[]): Buffer {
  const sorted = [...entries].sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of sorted) {
    if (entry.data.length >= MAX32) throw new CliError('PACK_FILE_TOO_LARGE', `${entry.path} is ${entry.data.length} bytes`);
    const name = Buffer.from(entry.path, 'utf8');
    const deflated = deflateRawSync(entry.data, { level: 9 });
    const stored = deflated.length >= entry.data.length;
    const body = stored ? entry.data : deflated;
    const method = stored ? 0 : 8;
    const crc = crc32(entry.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(VERSION, 4);
    local.writeUInt16LE(UTF8_NAMES, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(entry.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(MADE_BY_UNIX | VERSION, 4);
    central.writeUInt16LE(VERSION, 6);
    central.writeUInt16LE(UTF8_NAMES, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(DOS_TIME, 12);
    central.writeUInt16LE(DOS_DATE, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(entry.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    // extra length, comment length, disk number, internal attributes: 0
    central.writeUInt32LE(((0o100000 | entry.mode) << 16) >>> 0, 38); // regular file + permissions
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
    if (offset >= MAX32) throw new CliError('PACK_FILE_TOO_LARGE', 'the archive would be larger than 4 GiB');
  }
  const centralSize = centrals.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(sorted.length, 8);
  end.writeUInt16LE(sorted.length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  if (sorted.length > 0xffff)
    throw new CliError('PACK_FILE_TOO_LARGE', `${sorted.length} files are more than a ZIP without ZIP64 holds (65535)`);
  return Buffer.concat([...locals, ...centrals, end]);
}
