import { deflateRawSync } from 'node:zlib';
import { crc32 } from '../crc32';

/**
 * One entry of a hand-built ZIP. Every field a hostile archive could lie
 * about can be set, which ordinary zip tools refuse to produce.
 */
export interface ZipEntrySpec {
  /** Entry name as stored (a Buffer for bytes that are not UTF-8). */
  name: string | Buffer;
  data?: string | Buffer;
  /** 0 stored, 8 deflate (default), anything else is written as stored bytes with that method id. */
  method?: number;
  /** Unix mode including the file type bits (0o100644 regular file, 0o120777 symlink...). */
  unixMode?: number;
  /** Raw external attributes; overrides unixMode. */
  externalAttr?: number;
  /** General purpose flags (bit 0: encrypted, bit 11: UTF-8 names). */
  flags?: number;
  /** Declared uncompressed size; defaults to the real one. */
  declaredSize?: number;
  /** Declared CRC-32; defaults to the real one. */
  declaredCrc?: number;
  /** Bytes to store as the compressed body as they are (damaged deflate streams). */
  rawBody?: Buffer;
  /**
   * Index of an earlier entry whose local header and data this one reuses:
   * only a central record is written, pointing at that entry (overlapping
   * entries, as in non-recursive zip bombs).
   */
  sharesDataWith?: number;
}

/** How the archive as a whole is written. */
export interface ZipLayout {
  /**
   * ZIP64 records as a writer that always uses them would write: sizes and
   * offsets of each central record marked 0xFFFFFFFF and given in its ZIP64
   * extra field, and the end record's numbers marked and given in a ZIP64 end
   * record with its locator.
   */
  zip64?: boolean;
  /** The archive comment, after the end record. */
  comment?: Buffer;
}

/** Builds a ZIP archive byte by byte (local headers, central directory, end record). */
export function buildZip(entries: ZipEntrySpec[], layout: ZipLayout = {}): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  const written: { offset: number; method: number; crc: number; compressed: number; size: number }[] = [];
  for (const e of entries) {
    const name = typeof e.name === 'string' ? Buffer.from(e.name, 'utf8') : e.name;
    const raw = e.data === undefined ? Buffer.alloc(0) : Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data, 'utf8');
    const method = e.method ?? 8;
    const body = e.rawBody ?? (method === 8 ? deflateRawSync(raw, { level: 6 }) : raw);
    const crc = e.declaredCrc ?? crc32(raw);
    const size = e.declaredSize ?? raw.length;
    const flags = e.flags ?? 0x800;
    const isDir = typeof e.name === 'string' && e.name.endsWith('/');
    const mode = e.unixMode ?? (isDir ? 0o040755 : 0o100644);
    const attr = e.externalAttr ?? ((mode << 16) | (isDir ? 0x10 : 0)) >>> 0;
    const shared = e.sharesDataWith === undefined ? undefined : written[e.sharesDataWith];
    if (e.sharesDataWith !== undefined && !shared) throw new Error(`sharesDataWith ${e.sharesDataWith} names no earlier entry`);
    written.push({ offset, method, crc, compressed: body.length, size });
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(0x00210000, 10); // 1980-01-01 00:00
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size >>> 0, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix, so the mode bits count
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(shared?.method ?? method, 10);
    central.writeUInt32LE(0x00210000, 12);
    central.writeUInt32LE((shared?.crc ?? crc) >>> 0, 16);
    central.writeUInt32LE(shared?.compressed ?? body.length, 20);
    central.writeUInt32LE((shared?.size ?? size) >>> 0, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(attr, 38);
    central.writeUInt32LE(shared?.offset ?? offset, 42);
    if (layout.zip64) {
      const extra = Buffer.alloc(28);
      extra.writeUInt16LE(0x0001, 0);
      extra.writeUInt16LE(24, 2);
      extra.writeBigUInt64LE(BigInt(central.readUInt32LE(24)), 4);
      extra.writeBigUInt64LE(BigInt(central.readUInt32LE(20)), 12);
      extra.writeBigUInt64LE(BigInt(central.readUInt32LE(42)), 20);
      for (const at of [20, 24, 42]) central.writeUInt32LE(0xffffffff, at);
      central.writeUInt16LE(extra.length, 30);
      centrals.push(central, name, extra);
    } else {
      centrals.push(central, name);
    }
    if (shared) {
      written[written.length - 1] = shared;
      continue;
    }
    locals.push(local, name, body);
    offset += local.length + name.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const comment = layout.comment ?? Buffer.alloc(0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  end.writeUInt16LE(comment.length, 20);
  if (!layout.zip64) return Buffer.concat([...locals, cd, end, comment]);
  const record = Buffer.alloc(56);
  record.writeUInt32LE(0x06064b50, 0);
  record.writeBigUInt64LE(44n, 4); // the record's size after its first 12 bytes
  record.writeUInt16LE(45, 12);
  record.writeUInt16LE(45, 14);
  record.writeBigUInt64LE(BigInt(entries.length), 24);
  record.writeBigUInt64LE(BigInt(entries.length), 32);
  record.writeBigUInt64LE(BigInt(cd.length), 40);
  record.writeBigUInt64LE(BigInt(offset), 48);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(0x07064b50, 0);
  locator.writeBigUInt64LE(BigInt(offset + cd.length), 8);
  locator.writeUInt32LE(1, 16);
  for (const at of [8, 10]) end.writeUInt16LE(0xffff, at);
  for (const at of [12, 16]) end.writeUInt32LE(0xffffffff, at);
  return Buffer.concat([...locals, cd, record, locator, end, comment]);
}

/** A valid manifest for tests, with fields overridable. */
export function testManifest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    pluginId: 'com.example.echo',
    name: 'Echo',
    version: '1.0.0',
    author: 'Example',
    protocolVersion: 2,
    sdkVersion: '2.0.0',
    transport: { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['index.js', '--host-stdio'], workingDirectory: '.' } },
    eventSubscriptions: [{ eventType: 'message.created' }],
    permissions: ['messages.reply'],
    commands: [{ name: 'echo', prefixes: ['/'], priority: 0 }],
    ...overrides,
  };
}

/** A small valid package archive; `extra` entries are added after manifest.json and index.js. */
export function testPackage(
  options: { manifest?: Record<string, unknown>; folder?: string; extra?: ZipEntrySpec[]; indexJs?: string } = {},
): Buffer {
  const prefix = options.folder ? `${options.folder}/` : '';
  return buildZip([
    { name: `${prefix}manifest.json`, data: JSON.stringify(options.manifest ?? testManifest(), null, 2) },
    { name: `${prefix}index.js`, data: options.indexJs ?? "console.error('echo plugin');\n" },
    ...(options.extra ?? []),
  ]);
}
