import { HostError } from '@host/host-core';
import type { ArchiveSource } from './archive-source';

// The ZIP format's records as APPNOTE.TXT (PKWARE) defines them; only what a package needs is read:
// one disk, stored or deflated entries, ZIP64 sizes and offsets.
const END_SIGNATURE = 0x06054b50;
const END_BYTES = 22;
const MAX_COMMENT_BYTES = 0xffff;
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
const ZIP64_LOCATOR_BYTES = 20;
const ZIP64_END_SIGNATURE = 0x06064b50;
const ZIP64_END_BYTES = 56;
const CENTRAL_SIGNATURE = 0x02014b50;
const CENTRAL_BYTES = 46;
export const LOCAL_SIGNATURE = 0x04034b50;
export const LOCAL_BYTES = 30;
const ZIP64_EXTRA_ID = 0x0001;
const U16_MARK = 0xffff;
const U32_MARK = 0xffffffff;
/** Bytes of the central directory read at once. */
const WINDOW_BYTES = 64 * 1024;

/** Where the central directory is, as the end record (or its ZIP64 form) says. */
export interface EndRecord {
  entries: number;
  directoryOffset: number;
  directorySize: number;
  /** Where the end records start: the central directory must end exactly here. */
  endOffset: number;
}

/** One record of the central directory, its numbers resolved through the ZIP64 field when marked. */
export interface CentralRecord {
  rawName: Buffer;
  flags: number;
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
  externalAttributes: number;
}

export function notAZip(reason: string): HostError {
  return new HostError(
    'INSTALL_NOT_A_ZIP',
    `The upload is not a readable ZIP archive: ${reason}. Build the package with the packer (host-plugin pack) or any zip tool.`,
    { reason },
  );
}

function ambiguous(reason: string): HostError {
  return new HostError(
    'INSTALL_ZIP_AMBIGUOUS',
    `The archive can be read in more than one way: ${reason}. Zip tools would disagree on what it holds; re-create the ZIP with an ordinary zip tool.`,
    { reason },
  );
}

function readU64(b: Buffer, at: number, what: string): number {
  const v = b.readBigUInt64LE(at);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw notAZip(`its ZIP64 ${what} (${v}) is beyond any file`);
  return Number(v);
}

/**
 * Finds the end of central directory record: the one signature in the last
 * 64 KiB whose comment reaches exactly the end of the file. A second
 * signature that would also fit, or one inside the comment (where readers
 * that scan backwards stop first), makes the archive ambiguous.
 */
export function readEndRecord(source: ArchiveSource): EndRecord {
  if (source.size < END_BYTES) throw notAZip(`it has ${source.size} bytes, fewer than an empty ZIP`);
  const tailStart = Math.max(0, source.size - END_BYTES - MAX_COMMENT_BYTES);
  const tail = source.read(tailStart, source.size - tailStart);
  const signatures: number[] = [];
  for (let i = tail.length - END_BYTES; i >= 0; i--) if (tail.readUInt32LE(i) === END_SIGNATURE) signatures.push(i);
  const fitting = signatures.filter((i) => i + END_BYTES + tail.readUInt16LE(i + 20) === tail.length);
  if (fitting.length === 0)
    throw notAZip(
      signatures.length
        ? 'its end record does not reach the end of the file (truncated?)'
        : 'it has no end of central directory record (truncated, or not a ZIP)',
    );
  if (fitting.length > 1) throw ambiguous(`it has ${fitting.length} end records whose comments reach the end of the file`);
  const at = fitting[0]!;
  if (signatures[0] !== at) throw ambiguous("its comment holds a second end record's signature");
  const end = tail.subarray(at, at + END_BYTES);
  const endPosition = tailStart + at;
  const disk = end.readUInt16LE(4);
  const directoryDisk = end.readUInt16LE(6);
  const onDisk = end.readUInt16LE(8);
  let entries = end.readUInt16LE(10);
  let directorySize = end.readUInt32LE(12);
  let directoryOffset = end.readUInt32LE(16);
  let endOffset = endPosition;
  const locatorAt = endPosition - ZIP64_LOCATOR_BYTES;
  const locator = locatorAt >= 0 ? source.read(locatorAt, ZIP64_LOCATOR_BYTES) : undefined;
  if (locator && locator.readUInt32LE(0) === ZIP64_LOCATOR_SIGNATURE) {
    if (locator.readUInt32LE(4) !== 0 || locator.readUInt32LE(16) !== 1) throw notAZip('it spans several disks');
    const recordAt = readU64(locator, 8, 'end record offset');
    const head = source.read(recordAt, ZIP64_END_BYTES);
    if (head.length < ZIP64_END_BYTES || head.readUInt32LE(0) !== ZIP64_END_SIGNATURE) {
      throw notAZip(`its ZIP64 locator points at offset ${recordAt}, where there is no ZIP64 end record`);
    }
    // The record's declared size counts from after its first 12 bytes; it must end where the locator starts.
    if (recordAt + 12 + readU64(head, 4, 'end record size') !== locatorAt) {
      throw ambiguous('its ZIP64 end record does not end where its locator starts');
    }
    if (head.readUInt32LE(16) !== 0 || head.readUInt32LE(20) !== 0) throw notAZip('it spans several disks');
    const wide = {
      onDisk: readU64(head, 24, 'entry count'),
      entries: readU64(head, 32, 'entry count'),
      size: readU64(head, 40, 'directory size'),
      offset: readU64(head, 48, 'directory offset'),
    };
    if (wide.onDisk !== wide.entries) throw notAZip('it spans several disks');
    // A field the end record does not mark as "see ZIP64" must say the same in both records.
    const agree = (narrow: number, mark: number, value: number) => narrow === mark || narrow === value;
    if (
      !agree(entries, U16_MARK, wide.entries) ||
      !agree(directorySize, U32_MARK, wide.size) ||
      !agree(directoryOffset, U32_MARK, wide.offset)
    ) {
      throw ambiguous('its end record and its ZIP64 end record disagree on the central directory');
    }
    entries = wide.entries;
    directorySize = wide.size;
    directoryOffset = wide.offset;
    endOffset = recordAt;
  } else {
    if (disk !== 0 || directoryDisk !== 0 || onDisk !== entries) throw notAZip('it spans several disks');
    if (entries === U16_MARK || directorySize === U32_MARK || directoryOffset === U32_MARK) {
      throw notAZip('its end record refers to a ZIP64 end record that is missing');
    }
  }
  if (directoryOffset + directorySize > endOffset) {
    throw notAZip(`its central directory (${directorySize} bytes at offset ${directoryOffset}) runs past its end record (truncated?)`);
  }
  if (directoryOffset + directorySize !== endOffset) {
    throw ambiguous(`${endOffset - directoryOffset - directorySize} bytes lie between its central directory and its end record`);
  }
  return { entries, directoryOffset, directorySize, endOffset };
}

/**
 * The records of the central directory, in order, read a window at a time.
 * The directory must hold exactly the records the end record counts, and
 * nothing after them.
 */
export function* centralRecords(source: ArchiveSource, end: EndRecord): Generator<CentralRecord> {
  const limit = end.directoryOffset + end.directorySize;
  let window: Buffer = Buffer.alloc(0);
  let windowAt = end.directoryOffset;
  let at = end.directoryOffset;
  let index = 0;
  const take = (n: number): Buffer => {
    if (at + n > limit) throw notAZip(`its central directory ends inside record ${index + 1} of ${end.entries} (truncated or miscounted)`);
    if (at < windowAt || at + n > windowAt + window.length) {
      windowAt = at;
      window = source.read(at, Math.min(limit - at, Math.max(n, WINDOW_BYTES)));
      if (window.length < n) throw notAZip('the file ends inside its central directory');
    }
    const out = window.subarray(at - windowAt, at - windowAt + n);
    at += n;
    return out;
  };
  for (; index < end.entries; index++) {
    const head = take(CENTRAL_BYTES);
    if (head.readUInt32LE(0) !== CENTRAL_SIGNATURE) throw notAZip(`central directory record ${index + 1} has no signature`);
    const nameLength = head.readUInt16LE(28);
    const extraLength = head.readUInt16LE(30);
    const commentLength = head.readUInt16LE(32);
    // Copied: the window is reused for the next records.
    const rawName = Buffer.from(take(nameLength));
    const extra = take(extraLength);
    take(commentLength);
    const record: CentralRecord = {
      rawName,
      flags: head.readUInt16LE(8),
      method: head.readUInt16LE(10),
      crc: head.readUInt32LE(16),
      compressedSize: head.readUInt32LE(20),
      size: head.readUInt32LE(24),
      localOffset: head.readUInt32LE(42),
      externalAttributes: head.readUInt32LE(38),
    };
    const diskStart = head.readUInt16LE(34);
    resolveZip64(record, extra, diskStart, index);
    yield record;
  }
  checkDirectoryEnd(end, at);
}

/** The central directory's records, read up to `recordsEnd`, must fill it exactly as the end record gives its length. */
export function checkDirectoryEnd(end: EndRecord, recordsEnd: number): void {
  const limit = end.directoryOffset + end.directorySize;
  if (recordsEnd !== limit) throw ambiguous(`its central directory has ${limit - recordsEnd} bytes after its ${end.entries} records`);
}

/**
 * Replaces the sizes and offset a central record marks with 0xFFFFFFFF by the
 * values of its ZIP64 extra field, which holds exactly those, in a fixed order.
 */
export function resolveZip64(record: CentralRecord, extra: Buffer, diskStart: number, index: number): void {
  const wanted = [record.size === U32_MARK, record.compressedSize === U32_MARK, record.localOffset === U32_MARK];
  let field: Buffer | undefined;
  for (let i = 0; i + 4 <= extra.length;) {
    const id = extra.readUInt16LE(i);
    const length = extra.readUInt16LE(i + 2);
    if (i + 4 + length > extra.length) break;
    if (id === ZIP64_EXTRA_ID) {
      if (field) throw ambiguous(`central directory record ${index + 1} has two ZIP64 fields`);
      field = extra.subarray(i + 4, i + 4 + length);
    }
    i += 4 + length;
  }
  if (diskStart !== 0 && !(diskStart === U16_MARK && field)) throw notAZip('it spans several disks');
  if (!wanted.includes(true)) return;
  const need = wanted.filter(Boolean).length * 8;
  if (!field || field.length < need) {
    throw notAZip(`central directory record ${index + 1} marks its sizes or offset as ZIP64 but has no ZIP64 field holding them`);
  }
  let at = 0;
  const next = (what: string) => {
    const v = readU64(field!, at, what);
    at += 8;
    return v;
  };
  if (wanted[0]) record.size = next('size');
  if (wanted[1]) record.compressedSize = next('compressed size');
  if (wanted[2]) record.localOffset = next('offset');
}

/** A local file header: what it says of its entry, and where the entry's data starts. */
export interface LocalHeader {
  flags: number;
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  rawName: Buffer;
  dataOffset: number;
  /** Sizes in the header are 0xFFFFFFFF and are given in its ZIP64 field (or a data descriptor). */
  zip64: boolean;
}

/** Reads the local header at `offset`; undefined when there is none. */
export function readLocalHeader(source: ArchiveSource, offset: number, nameLength: number): LocalHeader | undefined {
  const b = source.read(offset, LOCAL_BYTES + nameLength);
  if (b.length < LOCAL_BYTES || b.readUInt32LE(0) !== LOCAL_SIGNATURE) return undefined;
  const localNameLength = b.readUInt16LE(26);
  const rawName = localNameLength === nameLength ? b.subarray(LOCAL_BYTES) : source.read(offset + LOCAL_BYTES, localNameLength);
  const compressedSize = b.readUInt32LE(18);
  const size = b.readUInt32LE(22);
  return {
    flags: b.readUInt16LE(6),
    method: b.readUInt16LE(8),
    crc: b.readUInt32LE(14),
    compressedSize,
    size,
    rawName,
    dataOffset: offset + LOCAL_BYTES + localNameLength + b.readUInt16LE(28),
    zip64: compressedSize === U32_MARK || size === U32_MARK,
  };
}
