import { HostError } from '@host/host-core';
import AdmZip from 'adm-zip';
import { checkEntryName, collisionKey, decodeEntryName, MAX_NAME_BYTES, MAX_NAME_DEPTH, printableName } from './entry-name';
import { formatBytes, type InstallLimits } from './limits';

type AdmEntry = ReturnType<AdmZip['getEntries']>[number];

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const MSDOS_DIRECTORY = 0x10;
/** Windows reparse point (symbolic links and junctions stored by some tools). */
const MSDOS_REPARSE_POINT = 0x400;
const FLAG_ENCRYPTED = 0x1;
const FLAG_STRONG_ENCRYPTION = 0x40;
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
  /** The adm-zip entry, to read its compressed bytes. */
  source: AdmEntry;
}

export interface CheckedArchive {
  entries: ArchiveEntry[];
  /** Sum of declared sizes: an early refusal when it is already over the limit. */
  declaredTotal: number;
}

function entryError(code: ConstructorParameters<typeof HostError>[0], entry: string, why: string): HostError {
  return new HostError(code, why, { entry });
}

function checkKind(entry: AdmEntry, name: string): { isDirectory: boolean; executable: boolean } {
  const attr = entry.header.attr >>> 0;
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

/**
 * A name decoder for adm-zip that bounds its work before it happens. While
 * reading the central directory, adm-zip decodes every name and then creates
 * an implied folder entry for every prefix of every name, at a cost that
 * grows with the square of the depth: one 64 KB name of 32,000 levels took
 * seconds and gigabytes. This decoder is called for each name before that
 * step and refuses names that are too long or too deep, and archives whose
 * implied folders alone exceed the entry limit.
 */
function boundedNameDecoder(limits: InstallLimits, tooMany: (count: number) => HostError) {
  const folders = new Set<string>();
  const seen = new Set<Buffer>();
  return {
    efs: true,
    encode: (text: string) => Buffer.from(text, 'utf8'),
    decode: (raw: Buffer): string => {
      const shown = () => printableName(raw.subarray(0, 80).toString('utf8'));
      if (raw.length > MAX_NAME_BYTES) {
        throw new HostError(
          'INSTALL_INVALID_ENTRY_NAME',
          `Entry "${shown()}..." has a name of ${raw.length} bytes; at most ${MAX_NAME_BYTES} are allowed. Shorten the path.`,
          {
            entry: shown(),
          },
        );
      }
      const name = raw.toString('utf8');
      // adm-zip decodes a name again on every access; count each raw name once.
      if (seen.has(raw)) return name;
      seen.add(raw);
      let depth = 0;
      for (let i = name.indexOf('/'); i !== -1 && i < name.length - 1; i = name.indexOf('/', i + 1)) {
        if (++depth > MAX_NAME_DEPTH) {
          throw new HostError(
            'INSTALL_INVALID_ENTRY_NAME',
            `Entry "${shown()}..." is nested more than ${MAX_NAME_DEPTH} folders deep. Flatten the package.`,
            {
              entry: shown(),
            },
          );
        }
        folders.add(name.slice(0, i + 1));
        if (folders.size > limits.maxEntries) throw tooMany(folders.size);
      }
      return name;
    },
  };
}

/**
 * Opens an archive and checks every entry before anything is written: names,
 * kinds, encryption, compression method, duplicates, case collisions and the
 * entry count. Sizes are checked again, on real bytes, during extraction.
 */
export function readArchive(buffer: Buffer, limits: InstallLimits): CheckedArchive {
  const tooMany = (count: number) =>
    new HostError(
      'INSTALL_TOO_MANY_ENTRIES',
      `The archive has ${count} entries; the host allows at most ${limits.maxEntries}. Remove unneeded files (dev dependencies, tests, caches).`,
      { limit: limits.maxEntries, entries: count },
    );
  let zip: AdmZip;
  let raw: AdmEntry[];
  try {
    // `decoder` is a documented adm-zip option its type definitions omit.
    const options = { decoder: boundedNameDecoder(limits, tooMany) } as unknown as ConstructorParameters<typeof AdmZip>[1];
    zip = new AdmZip(buffer, options);
  } catch (e) {
    throw new HostError('INSTALL_NOT_A_ZIP', undefined, { reason: (e as Error).message });
  }
  // Reading the central directory costs kilobytes of heap per entry: a 64 MiB
  // upload declaring a million entries would exhaust the heap before the
  // count below is reached. The count in the end record (the number of
  // entries the parser will read) is checked before any entry is read.
  const declaredEntries = Number(zip.getEntryCount());
  if (declaredEntries > limits.maxEntries) throw tooMany(declaredEntries);
  try {
    raw = zip.getEntries();
  } catch (e) {
    if (e instanceof HostError) throw e;
    throw new HostError('INSTALL_NOT_A_ZIP', undefined, { reason: (e as Error).message });
  }
  if (raw.length > limits.maxEntries) throw tooMany(raw.length);
  const entries: ArchiveEntry[] = [];
  const exact = new Map<string, string>();
  const folded = new Map<string, string>();
  let declaredTotal = 0;
  for (const source of raw) {
    const name = decodeEntryName(source.rawEntryName);
    const { path, isDirectory: nameIsDir } = checkEntryName(name);
    const kind = checkKind(source, name);
    const h = source.header;
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
      source,
    });
  }
  checkParents(entries, exact, folded);
  checkOverlaps(buffer, entries);
  if (declaredTotal > limits.maxUnpackedBytes) {
    throw new HostError(
      'INSTALL_TOO_LARGE_UNPACKED',
      `The archive declares ${declaredTotal} bytes unpacked; the host allows at most ${formatBytes(limits.maxUnpackedBytes)}. Remove unneeded files.`,
      { limit: limits.maxUnpackedBytes, declared: declaredTotal },
    );
  }
  return { entries, declaredTotal };
}

const LOCAL_HEADER_SIGNATURE = 0x04034b50;
const LOCAL_HEADER_BYTES = 30;

/**
 * Every entry must own its bytes: its local header, name, extra field and
 * compressed data may not share a byte with another entry's. Overlapping
 * entries (many central records pointing at one local file, or into
 * another entry's data) let a small archive unpack to many times its size
 * while each entry looks ordinary; no zip tool writes them.
 */
function checkOverlaps(buffer: Buffer, entries: ArchiveEntry[]): void {
  const spans = entries.map((e) => {
    const start = e.source.header.offset;
    if (start + LOCAL_HEADER_BYTES > buffer.length || buffer.readUInt32LE(start) !== LOCAL_HEADER_SIGNATURE) {
      throw new HostError('INSTALL_NOT_A_ZIP', undefined, {
        reason: `entry "${printableName(e.path)}" has no local header at offset ${start}`,
      });
    }
    const header = LOCAL_HEADER_BYTES + buffer.readUInt16LE(start + 26) + buffer.readUInt16LE(start + 28);
    return { start, end: start + header + e.compressedSize, path: e.path };
  });
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
