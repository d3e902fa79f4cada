import { HostError } from '@host/host-core';
import { bufferSource, type ArchiveSource } from './archive-source';
import { checkEntryName, collisionKey, decodeEntryName, MAX_NAME_BYTES, MAX_NAME_DEPTH, printableName } from './entry-name';
import { formatBytes, type InstallLimits } from './limits';
import { centralRecords, notAZip, readEndRecord, readLocalHeader, type CentralRecord, type LocalHeader } from './zip-structure';

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const MSDOS_DIRECTORY = 0x10;
/** Windows reparse point (symbolic links and junctions stored by some tools). */
const MSDOS_REPARSE_POINT = 0x400;
const FLAG_ENCRYPTED = 0x1;
const FLAG_STRONG_ENCRYPTION = 0x40;
const FLAG_DATA_DESCRIPTOR = 0x8;
const METHOD_STORED = 0;
const METHOD_DEFLATE = 8;
const METHOD_AES = 99;

/** One checked archive entry. */
export interface ArchiveEntry {
  /** Normalised relative path inside the archive. */
  path: string;
  isDirectory: boolean;
  /** Unix permission bits to give the file (0o755 or 0o644). */
  mode: number;
  method: number;
  /** Sizes as the central directory declares them: checked, never trusted. */
  declaredSize: number;
  compressedSize: number;
  crc: number;
  /** The archive the entry's compressed bytes are read from, and where they start (after its local header). */
  archive: ArchiveSource;
  dataOffset: number;
}

export interface CheckedArchive {
  entries: ArchiveEntry[];
  /** Sum of declared sizes: an early refusal when it is already over the limit. */
  declaredTotal: number;
}

function entryError(code: ConstructorParameters<typeof HostError>[0], entry: string, why: string): HostError {
  return new HostError(code, why, { entry });
}

function checkKind(record: CentralRecord, name: string): { isDirectory: boolean; executable: boolean } {
  const attr = record.externalAttributes >>> 0;
  const unixMode = attr >>> 16;
  const msdos = attr & 0xffff;
  const type = unixMode & S_IFMT;
  if (type === S_IFLNK || msdos & MSDOS_REPARSE_POINT) {
    throw entryError(
      'INSTALL_LINK_ENTRY',
      name,
      `Entry "${printableName(name)}" is a symbolic link. Replace it with the file or folder it points to.`,
    );
  }
  if (type !== 0 && type !== S_IFREG && type !== S_IFDIR) {
    throw entryError(
      'INSTALL_SPECIAL_ENTRY',
      name,
      `Entry "${printableName(name)}" is a device, FIFO or socket (mode 0o${type.toString(8)}). Package regular files and folders only.`,
    );
  }
  const isDirectory = type === S_IFDIR || name.endsWith('/') || (type === 0 && (msdos & MSDOS_DIRECTORY) !== 0);
  return { isDirectory, executable: (unixMode & 0o111) !== 0 };
}

function tooManyEntries(limits: InstallLimits, count: number): HostError {
  return new HostError(
    'INSTALL_TOO_MANY_ENTRIES',
    `The archive has ${count} entries; the host allows at most ${limits.maxEntries}. Remove unneeded files (dev dependencies, tests, caches).`,
    { limit: limits.maxEntries, entries: count },
  );
}

/** The entry count an end record declares, refused before any central record is read. */
export function checkEntryCount(count: number, limits: InstallLimits): void {
  if (count > limits.maxEntries) throw tooManyEntries(limits, count);
}

/**
 * Bounds each raw name before anything else looks at it: its length, its
 * depth (the parent checks cost the square of the depth), and the folders
 * all names imply together, which may not exceed the entry limit. Called on
 * each central record as it is read.
 */
export function nameBounds(limits: InstallLimits): (raw: Buffer) => void {
  const tooMany = (count: number) => tooManyEntries(limits, count);
  const folders = new Set<string>();
  return (raw) => {
    const shown = () => printableName(raw.subarray(0, 80).toString('utf8'));
    if (raw.length > MAX_NAME_BYTES) {
      throw new HostError(
        'INSTALL_INVALID_ENTRY_NAME',
        `Entry "${shown()}..." has a name of ${raw.length} bytes; at most ${MAX_NAME_BYTES} are allowed. Shorten the path.`,
        { entry: shown() },
      );
    }
    const name = raw.toString('utf8');
    let depth = 0;
    for (let i = name.indexOf('/'); i !== -1 && i < name.length - 1; i = name.indexOf('/', i + 1)) {
      if (++depth > MAX_NAME_DEPTH) {
        throw new HostError(
          'INSTALL_INVALID_ENTRY_NAME',
          `Entry "${shown()}..." is nested more than ${MAX_NAME_DEPTH} folders deep. Flatten the package.`,
          { entry: shown() },
        );
      }
      folders.add(name.slice(0, i + 1));
      if (folders.size > limits.maxEntries) throw tooMany(folders.size);
    }
  };
}

/**
 * Opens an archive and checks every entry before anything is written: the
 * ZIP's own structure (end record, central directory, each local header
 * against its central record), names, kinds, encryption, compression
 * method, duplicates, case collisions, overlaps and the entry count. Only
 * the central directory and the local headers are read, a window at a time;
 * sizes are checked again, on real bytes, during extraction.
 */
export function readArchive(input: Uint8Array | ArchiveSource, limits: InstallLimits): CheckedArchive {
  const source = input instanceof Uint8Array ? bufferSource(input) : input;
  const end = readEndRecord(source);
  // The count of the end record is checked before any record is read.
  checkEntryCount(end.entries, limits);
  const bound = nameBounds(limits);
  const raw: CentralRecord[] = [];
  for (const record of centralRecords(source, end)) {
    bound(record.rawName);
    raw.push(record);
  }
  return checkRecords(source, raw, end.directoryOffset, limits, (offset, nameLength) => readLocalHeader(source, offset, nameLength));
}

/** The local header at `offset` (its central record's name is `nameLength` bytes); undefined when there is none. */
export type LocalHeaderReader = (offset: number, nameLength: number) => LocalHeader | undefined;

/**
 * The checks of every entry once the central directory is read: names,
 * kinds, encryption, compression method, duplicates, case collisions, the
 * folders files imply, each local header against its central record,
 * overlaps and the declared total.
 */
export function checkRecords(
  source: ArchiveSource,
  raw: CentralRecord[],
  directoryOffset: number,
  limits: InstallLimits,
  readLocal: LocalHeaderReader,
): CheckedArchive {
  const entries: ArchiveEntry[] = [];
  const exact = new Map<string, string>();
  const folded = new Map<string, string>();
  let declaredTotal = 0;
  for (const h of raw) {
    const name = decodeEntryName(h.rawName);
    const { path, isDirectory: nameIsDir } = checkEntryName(name);
    const kind = checkKind(h, name);
    // The local header's flags are checked again when the entry is inflated.
    if (h.flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION) || h.method === METHOD_AES) {
      throw entryError(
        'INSTALL_ENCRYPTED_ENTRY',
        name,
        `Entry "${printableName(name)}" is encrypted. Build the package without a password.`,
      );
    }
    const isDirectory = nameIsDir || kind.isDirectory;
    if (!isDirectory && h.method !== METHOD_STORED && h.method !== METHOD_DEFLATE) {
      throw entryError(
        'INSTALL_UNSUPPORTED_COMPRESSION',
        name,
        `Entry "${printableName(name)}" uses compression method ${h.method}; only stored (0) and deflate (8) are accepted. Re-create the ZIP with deflate.`,
      );
    }
    // A folder entry and the implicit folder of a file are the same path; only files may not repeat.
    const key = collisionKey(path);
    const seen = exact.get(path);
    if (seen !== undefined && !(isDirectory && seen === 'dir')) {
      throw entryError(
        'INSTALL_DUPLICATE_ENTRY',
        name,
        `The archive has "${printableName(path)}" twice. Re-create the ZIP so each file appears once.`,
      );
    }
    const other = folded.get(key);
    if (other !== undefined && other !== path) {
      throw entryError(
        'INSTALL_CASE_COLLISION',
        name,
        `Entries "${printableName(other)}" and "${printableName(path)}" differ only in letter case or Unicode form and would collide on some systems. Rename one of them.`,
      );
    }
    exact.set(path, isDirectory ? 'dir' : 'file');
    folded.set(key, path);
    declaredTotal += isDirectory ? 0 : h.size;
    entries.push({
      path,
      isDirectory,
      mode: kind.executable ? 0o755 : 0o644,
      method: h.method,
      declaredSize: h.size,
      compressedSize: h.compressedSize,
      crc: h.crc >>> 0,
      archive: source,
      dataOffset: 0,
    });
  }
  checkParents(entries, exact, folded);
  checkLocalHeaders(entries, raw, directoryOffset, readLocal);
  if (declaredTotal > limits.maxUnpackedBytes) {
    throw new HostError(
      'INSTALL_TOO_LARGE_UNPACKED',
      `The archive declares ${declaredTotal} bytes unpacked; the host allows at most ${formatBytes(limits.maxUnpackedBytes)}. Remove unneeded files.`,
      { limit: limits.maxUnpackedBytes, declared: declaredTotal },
    );
  }
  return { entries, declaredTotal };
}

/** Deflate never makes more than this of `size` bytes (stored blocks cost 5 bytes per 64 KiB; the rest is margin). */
function maxDeflatedBytes(size: number): number {
  return size + Math.ceil(size / 8) + 1024;
}

/**
 * Each entry's local header must be where its central record says, name the
 * same file with the same method, encryption, CRC-32 and sizes (those a data
 * descriptor does not give later), and its data must lie before the central
 * directory. Every entry must own its bytes: its local header, name, extra
 * field and compressed data may not share a byte with another entry's.
 * Overlapping entries (many central records pointing at one local file, or
 * into another entry's data) let a small archive unpack to many times its
 * size while each entry looks ordinary; no zip tool writes them.
 */
function checkLocalHeaders(entries: ArchiveEntry[], raw: CentralRecord[], directoryOffset: number, readLocal: LocalHeaderReader): void {
  const locals = entries.map((e, i) => {
    const start = raw[i]!.localOffset;
    const local = readLocal(start, raw[i]!.rawName.length);
    if (!local) throw notAZip(`entry "${printableName(e.path)}" has no local header at offset ${start}`);
    return local;
  });
  // Overlaps first: records sharing one local header also disagree with it on their names.
  const spans = entries.map((e, i) => ({ start: raw[i]!.localOffset, end: locals[i]!.dataOffset + e.compressedSize, path: e.path }));
  spans.sort((a, b) => a.start - b.start);
  for (let i = 1; i < spans.length; i++) {
    const prev = spans[i - 1]!;
    const cur = spans[i]!;
    if (cur.start < prev.end) {
      throw entryError(
        'INSTALL_OVERLAPPING_ENTRIES',
        cur.path,
        `Entries "${printableName(prev.path)}" and "${printableName(cur.path)}" share bytes of the archive (bytes ${cur.start} to ${Math.min(prev.end, cur.end) - 1}). Re-create the ZIP with an ordinary zip tool.`,
      );
    }
  }
  entries.forEach((e, i) => {
    const central = raw[i]!;
    const local = locals[i]!;
    const disagree = (what: string) =>
      entryError(
        'INSTALL_ENTRY_CORRUPT',
        e.path,
        `Entry "${printableName(e.path)}" has a local header that disagrees with the central directory on its ${what}. The archive is damaged or was altered: re-create the ZIP and upload it again.`,
      );
    if (local.flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION) || local.method === METHOD_AES) {
      throw entryError(
        'INSTALL_ENCRYPTED_ENTRY',
        e.path,
        `Entry "${printableName(e.path)}" is encrypted. Build the package without a password.`,
      );
    }
    if (!local.rawName.equals(central.rawName)) throw disagree('name');
    if (local.method !== central.method) throw disagree('compression method');
    // With a data descriptor (flag bit 3) the local header leaves CRC and sizes to the descriptor after the data.
    if (!(local.flags & FLAG_DATA_DESCRIPTOR)) {
      if (local.crc >>> 0 !== central.crc >>> 0) throw disagree('CRC-32');
      if (!local.zip64 && (local.compressedSize !== central.compressedSize || local.size !== central.size)) throw disagree('sizes');
    }
    const end = local.dataOffset + e.compressedSize;
    if (end > directoryOffset) {
      throw entryError(
        'INSTALL_ENTRY_CORRUPT',
        e.path,
        `Entry "${printableName(e.path)}" runs past the entries' data into the central directory (offset ${end} > ${directoryOffset}). The archive is truncated or was altered: re-create the ZIP.`,
      );
    }
    if (!e.isDirectory) {
      const fits = e.method === METHOD_STORED ? e.compressedSize === e.declaredSize : e.compressedSize <= maxDeflatedBytes(e.declaredSize);
      if (!fits) {
        throw entryError(
          'INSTALL_ENTRY_CORRUPT',
          e.path,
          `Entry "${printableName(e.path)}" holds ${e.compressedSize} compressed bytes for the ${e.declaredSize} it declares, more than ${e.method === METHOD_STORED ? 'storing' : 'deflate'} makes of them. The archive is damaged or was altered: re-create the ZIP.`,
        );
      }
    }
    e.dataOffset = local.dataOffset;
  });
}

/**
 * A file may not also be the folder of another entry ("a" and "a/b"), and two
 * folders, explicit or implied by the files in them, may not differ only in
 * case ("A/x" and "a/y").
 */
function checkParents(entries: ArchiveEntry[], exact: Map<string, string>, folded: Map<string, string>): void {
  const folders = new Map<string, string>();
  for (const e of entries) {
    const parts = e.path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join('/');
      const key = collisionKey(parent);
      const owner = folded.get(key);
      if (owner !== undefined && exact.get(owner) === 'file') {
        throw entryError(
          owner === parent ? 'INSTALL_DUPLICATE_ENTRY' : 'INSTALL_CASE_COLLISION',
          e.path,
          `"${printableName(owner)}" is a file, but "${printableName(e.path)}" needs "${printableName(parent)}" to be a folder. Re-create the ZIP.`,
        );
      }
      const other = owner ?? folders.get(key);
      if (other !== undefined && other !== parent) {
        throw entryError(
          'INSTALL_CASE_COLLISION',
          e.path,
          `Folders "${printableName(other)}" and "${printableName(parent)}" differ only in letter case or Unicode form. Rename one of them.`,
        );
      }
      folders.set(key, parent);
    }
  }
}
