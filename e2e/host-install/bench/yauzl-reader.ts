// A reader of package ZIPs built on yauzl, with every check of the installer's own reader kept, for the
// comparison in reader-compare.ts. The host does not use it: libs/host-installer/README.md ("Why not
// yauzl") gives the numbers and the decision.
//
// yauzl reads the central directory and each entry's data; the installer's checks run on what it reads
// (`checkRecords`, `nameBounds`, `entryWriter`). What yauzl does not check is checked as the installer's
// reader does: the end record first (one end record, none inside the comment, ZIP64 records that agree,
// the central directory exactly before it), then that the records fill the directory, then each local
// header against its central record. Names are taken raw (`decodeStrings: false`): yauzl would otherwise
// decode a name without the UTF-8 flag as CP437 and prefer an Info-ZIP Unicode path field to the stored
// name, a second name other tools ignore; `strictFileNames` only acts on decoded names.
import { HostError } from '@host/host-core';
import {
  checkDirectoryEnd,
  checkEntryCount,
  checkRecords,
  damagedData,
  entryWriter,
  nameBounds,
  notAZip,
  openFileSource,
  readEndRecord,
  resolveZip64,
  writerSink,
  type ArchiveEntry,
  type CentralRecord,
  type InstallLimits,
  type LocalHeader,
} from '@host/host-installer';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import * as yauzl from 'yauzl';

const OPTIONS: yauzl.Options = {
  lazyEntries: true,
  autoClose: false,
  validateEntrySizes: true,
  strictFileNames: true,
  decodeStrings: false,
};
const CENTRAL_BYTES = 46;
const U32_MARK = 0xffffffff;

/** An archive read and checked through yauzl: the checked entries, and yauzl's entry for each. */
export interface YauzlArchive {
  entries: ArchiveEntry[];
  zipfile: yauzl.ZipFile;
  found: yauzl.Entry[];
  close(): void;
}

/** yauzl's plain errors as the installer's codes. */
function fromYauzl(e: unknown, entry?: ArchiveEntry): HostError {
  if (e instanceof HostError) return e;
  const message = (e as Error).message;
  if (/encryption/.test(message)) {
    return new HostError('INSTALL_ENCRYPTED_ENTRY', `An entry is encrypted (${message}). Build the package without a password.`, {
      entry: entry?.path ?? '',
    });
  }
  if (entry || /size mismatch|overflows file bounds|too many bytes|not enough bytes/.test(message)) {
    return entry
      ? damagedData(entry, e)
      : new HostError('INSTALL_ENTRY_CORRUPT', `An entry is damaged (${message}). Re-create the ZIP and upload it again.`, { entry: '' });
  }
  return notAZip(message);
}

/** The local header yauzl reads at an entry's offset, in the installer's shape; undefined when there is none. */
async function localHeader(zipfile: yauzl.ZipFile, entry: yauzl.Entry): Promise<LocalHeader | undefined | Error> {
  try {
    const h = await zipfile.readLocalFileHeaderPromise(entry, { minimal: false });
    return {
      flags: h.generalPurposeBitFlag,
      method: h.compressionMethod,
      crc: h.crc32,
      compressedSize: h.compressedSize,
      size: h.uncompressedSize,
      rawName: h.fileName as unknown as Buffer,
      dataOffset: h.fileDataStart,
      zip64: h.compressedSize === U32_MARK || h.uncompressedSize === U32_MARK,
    };
  } catch (e) {
    return /local file header signature/.test((e as Error).message) ? undefined : (e as Error);
  }
}

/** Opens `file` with yauzl.open and checks every entry before anything is written, as `readArchive` does. */
export async function readArchiveWithYauzl(file: string, limits: InstallLimits): Promise<YauzlArchive> {
  const source = openFileSource(file);
  let zipfile: yauzl.ZipFile | undefined;
  try {
    const end = readEndRecord(source);
    checkEntryCount(end.entries, limits);
    zipfile = await yauzl.openPromise(file, OPTIONS).catch((e: unknown) => {
      throw fromYauzl(e);
    });
    const bound = nameBounds(limits);
    const raw: CentralRecord[] = [];
    const found: yauzl.Entry[] = [];
    let at = end.directoryOffset;
    try {
      for await (const e of zipfile.eachEntry()) {
        const rawName = e.fileNameRaw;
        bound(rawName);
        const record: CentralRecord = {
          rawName: Buffer.from(rawName),
          flags: e.generalPurposeBitFlag,
          method: e.compressionMethod,
          crc: e.crc32,
          compressedSize: e.compressedSize,
          size: e.uncompressedSize,
          localOffset: e.relativeOffsetOfLocalHeader,
          externalAttributes: e.externalFileAttributes,
        };
        // yauzl has resolved the ZIP64 numbers; this refuses a record with two ZIP64 fields, which yauzl reads the first of.
        resolveZip64(record, e.extraFieldRaw, 0, raw.length);
        at += CENTRAL_BYTES + e.fileNameLength + e.extraFieldLength + e.fileCommentLength;
        raw.push(record);
        found.push(e);
      }
    } catch (e) {
      throw fromYauzl(e);
    }
    checkDirectoryEnd(end, at);
    // Read ahead through yauzl; a failure is raised when the checks come to that entry's header.
    const locals = new Map<number, LocalHeader | undefined | Error>();
    for (const e of found) {
      if (!locals.has(e.relativeOffsetOfLocalHeader)) locals.set(e.relativeOffsetOfLocalHeader, await localHeader(zipfile, e));
    }
    const { entries } = checkRecords(source, raw, end.directoryOffset, limits, (offset) => {
      const local = locals.get(offset);
      if (local instanceof Error) throw fromYauzl(local);
      return local;
    });
    const opened = zipfile;
    return { entries, zipfile: opened, found, close: () => opened.close() };
  } catch (e) {
    zipfile?.close();
    throw e;
  } finally {
    source.close();
  }
}

/**
 * Unpacks every entry through yauzl's read streams (inflated by yauzl, its
 * sizes checked by `validateEntrySizes`) into `destination`, each piece going
 * through the installer's `entryWriter`: declared size, budget, ratio cap and
 * CRC-32, which yauzl does not check.
 */
export async function extractWithYauzl(
  archive: YauzlArchive,
  destination: string,
  limits: InstallLimits,
): Promise<{ files: number; bytes: number }> {
  const budget = { remaining: limits.maxUnpackedBytes };
  const made = new Set<string>();
  const ensureDir = (dir: string) => {
    if (made.has(dir)) return;
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    made.add(dir);
  };
  ensureDir(destination);
  let files = 0;
  for (const [i, entry] of archive.entries.entries()) {
    const target = join(destination, entry.path);
    if (entry.isDirectory) {
      ensureDir(target);
      continue;
    }
    ensureDir(dirname(target));
    const writer = entryWriter(entry, limits, budget, { path: target, mode: entry.mode });
    try {
      const stream = await archive.zipfile.openReadStreamPromise(archive.found[i]!);
      await pipeline(stream, writerSink(writer));
    } catch (e) {
      throw fromYauzl(e, entry);
    } finally {
      writer.close();
    }
    writer.finish();
    files++;
  }
  return { files, bytes: limits.maxUnpackedBytes - budget.remaining };
}
