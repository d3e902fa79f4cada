import { HostError } from '@host/host-core';
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createInflateRaw, crc32 as zlibCrc32, inflateRawSync } from 'node:zlib';
import type { ArchiveEntry } from './archive';
import { crc32 } from './crc32';
import { printableName } from './entry-name';
import { formatBytes, type InstallLimits } from './limits';

/** Bytes still allowed for the whole archive; shared by all entries of one extraction. */
export interface UnpackBudget {
  remaining: number;
}

function corrupt(entry: ArchiveEntry, why: string): HostError {
  return new HostError(
    'INSTALL_ENTRY_CORRUPT',
    `Entry "${printableName(entry.path)}" ${why}. The archive is damaged or was altered: re-create the ZIP and upload it again.`,
    { entry: entry.path },
  );
}

function tooLarge(limits: InstallLimits, entry: ArchiveEntry): HostError {
  return new HostError(
    'INSTALL_TOO_LARGE_UNPACKED',
    `The package unpacks to more than ${formatBytes(limits.maxUnpackedBytes)} (reached at "${printableName(entry.path)}"). Remove unneeded files.`,
    { limit: limits.maxUnpackedBytes, entry: entry.path },
  );
}

function ratioError(limits: InstallLimits, entry: ArchiveEntry): HostError {
  return new HostError(
    'INSTALL_COMPRESSION_RATIO',
    `Entry "${printableName(entry.path)}" expands more than ${limits.maxCompressionRatio} times its compressed size (${entry.compressedSize} bytes compressed). This is how zip bombs look: package ordinary files.`,
    { entry: entry.path, limit: limits.maxCompressionRatio },
  );
}

/**
 * The most bytes an entry may unpack to, and the error passing it means: its
 * declared size, what is left of the budget, or the compression-ratio cap.
 */
function outputCap(entry: ArchiveEntry, limits: InstallLimits, budget: UnpackBudget): { cap: number; over: () => HostError } {
  const ratioCap = Math.max(limits.ratioThresholdBytes, entry.compressedSize * limits.maxCompressionRatio);
  const cap = Math.min(entry.declaredSize, budget.remaining, ratioCap);
  const over = () => {
    if (cap === budget.remaining) return tooLarge(limits, entry);
    if (cap === ratioCap) return ratioError(limits, entry);
    return corrupt(entry, `unpacks to more than the ${entry.declaredSize} bytes its header declares`);
  };
  return { cap, over };
}

function readCompressed(entry: ArchiveEntry, position: number, length: number, into?: Buffer): Buffer {
  const bytes = entry.archive.read(entry.dataOffset + position, length, into);
  if (bytes.length !== length) throw corrupt(entry, 'is truncated');
  return bytes;
}

/**
 * Inflates one small entry into memory, counting real output bytes:
 * inflation stops as soon as the entry passes its declared size, the
 * compression-ratio cap or what is left of the budget, so a bomb never gets
 * to allocate its payload. An entry declaring more than the budget is
 * refused before it is read; the archive checks bounded its compressed size
 * by its declared one, so this holds at most about the budget in memory.
 */
export function inflateEntry(entry: ArchiveEntry, limits: InstallLimits, budget: UnpackBudget): Buffer {
  if (entry.declaredSize > budget.remaining) throw tooLarge(limits, entry);
  const compressed = readCompressed(entry, 0, entry.compressedSize);
  const { cap, over } = outputCap(entry, limits, budget);
  let data: Buffer;
  if (entry.method === 0) {
    data = compressed;
  } else {
    try {
      data = inflateRawSync(compressed, { maxOutputLength: Math.max(1, cap) });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ERR_BUFFER_TOO_LARGE')
        throw corrupt(entry, `has damaged compressed data (${(e as Error).message})`);
      throw over();
    }
  }
  if (data.length !== entry.declaredSize)
    throw corrupt(entry, `unpacks to ${data.length} bytes, not the ${entry.declaredSize} it declares`);
  if (crc32(data) !== entry.crc) throw corrupt(entry, 'fails its CRC-32 check');
  budget.remaining -= data.length;
  return data;
}

/** Entries declaring at most this many bytes are inflated in memory at once; larger ones stream. */
export const IN_MEMORY_ENTRY_BYTES = 1024 * 1024;
/** Compressed bytes read at once while an entry streams. */
const STREAM_READ_BYTES = 256 * 1024;

/** Takes an entry's inflated bytes as they come; see `entryWriter`. */
export interface EntryWriter {
  /** Counts, checks and writes one piece; throws as soon as the entry passes its cap. */
  take(piece: Buffer): void;
  /** Checks the whole entry (its size and CRC-32) and charges it to the budget; returns its size. */
  finish(): number;
  /** Closes the file; called whether the entry finished or failed. */
  close(): void;
}

/**
 * The checks every unpacked byte goes through, whoever inflates it: each
 * piece is counted against the entry's declared size, what is left of the
 * budget and the compression-ratio cap, added to its CRC-32 and written (to
 * `target`, created, never replaced; nowhere when null) as it comes.
 */
export function entryWriter(
  entry: ArchiveEntry,
  limits: InstallLimits,
  budget: UnpackBudget,
  target: { path: string; mode: number } | null,
): EntryWriter {
  if (entry.declaredSize > budget.remaining) throw tooLarge(limits, entry);
  const { cap, over } = outputCap(entry, limits, budget);
  let fd = target ? openSync(target.path, 'wx', target.mode) : null;
  let written = 0;
  let crc = 0;
  return {
    take(piece) {
      written += piece.length;
      if (written > cap) throw over();
      crc = zlibCrc32(piece, crc);
      if (fd !== null) for (let at = 0; at < piece.length;) at += writeSync(fd, piece, at);
    },
    finish() {
      if (written !== entry.declaredSize) throw corrupt(entry, `unpacks to ${written} bytes, not the ${entry.declaredSize} it declares`);
      if (crc >>> 0 !== entry.crc) throw corrupt(entry, 'fails its CRC-32 check');
      budget.remaining -= written;
      return written;
    },
    close() {
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}

/** The error for an entry whose compressed data the inflater refused. */
export function damagedData(entry: ArchiveEntry, e: unknown): HostError {
  if (e instanceof HostError) return e;
  return corrupt(entry, `has damaged compressed data (${(e as Error).message})`);
}

/**
 * Unpacks one entry of any size a piece at a time: compressed bytes read in
 * ranges, inflated by a zlib stream, each piece counted against the same
 * caps as inflateEntry, checked and written (to `target`, created, never
 * replaced; nowhere when null) before the next is read. Memory stays a few
 * hundred KiB whatever the entry's size.
 */
export async function streamEntry(
  entry: ArchiveEntry,
  limits: InstallLimits,
  budget: UnpackBudget,
  target: { path: string; mode: number } | null,
): Promise<number> {
  const writer = entryWriter(entry, limits, budget, target);
  try {
    const pieces = function* () {
      for (let at = 0; at < entry.compressedSize; at += STREAM_READ_BYTES) {
        yield readCompressed(entry, at, Math.min(STREAM_READ_BYTES, entry.compressedSize - at));
      }
    };
    if (entry.method === 0) {
      // Each piece is checked and written before the next is read: one buffer serves them all.
      const scratch = Buffer.allocUnsafe(Math.min(STREAM_READ_BYTES, entry.compressedSize));
      for (let at = 0; at < entry.compressedSize; at += STREAM_READ_BYTES) {
        writer.take(readCompressed(entry, at, Math.min(STREAM_READ_BYTES, entry.compressedSize - at), scratch));
        // A stored entry is read as fast as the disk allows: let the server answer in between.
        await new Promise((r) => setImmediate(r));
      }
    } else {
      try {
        await pipeline(Readable.from(pieces(), { objectMode: false }), createInflateRaw(), writerSink(writer));
      } catch (e) {
        throw damagedData(entry, e);
      }
    }
  } finally {
    writer.close();
  }
  return writer.finish();
}

/** A stream end that hands each piece to `writer`, failing the pipeline with the writer's error. */
export function writerSink(writer: EntryWriter): Writable {
  return new Writable({
    write(piece: Buffer, _encoding, done) {
      try {
        writer.take(piece);
        done();
      } catch (e) {
        done(e as Error);
      }
    },
  });
}

export interface ExtractOptions {
  /** Where to write; `null` checks every entry (inflating it under the limits) without writing. */
  destination: string | null;
  limits: InstallLimits;
  /** Entry paths relative to the package root, in archive order. */
  files: { entry: ArchiveEntry; path: string; mode: number }[];
}

const YIELD_EVERY_ENTRIES = 64;
const YIELD_EVERY_BYTES = 8 * 1024 * 1024;

/**
 * Writes the package's entries with synchronous calls (per-entry async I/O
 * costs several times unzip's time on thousands of small files) and yields to
 * the event loop every few dozen entries so the server keeps answering.
 * The caller owns the destination and removes it on failure.
 */
export async function extractEntries(options: ExtractOptions): Promise<{ files: number; bytes: number }> {
  const { destination, limits } = options;
  const budget: UnpackBudget = { remaining: limits.maxUnpackedBytes };
  const made = new Set<string>();
  const ensureDir = (dir: string) => {
    if (made.has(dir)) return;
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    made.add(dir);
  };
  if (destination) ensureDir(destination);
  let files = 0;
  let sinceYield = 0;
  let bytesSinceYield = 0;
  for (const { entry, path, mode } of options.files) {
    if (entry.isDirectory) {
      if (destination) ensureDir(join(destination, path));
      continue;
    }
    const target = destination ? join(destination, path) : null;
    if (target) ensureDir(dirname(target));
    let bytes: number;
    if (entry.declaredSize <= IN_MEMORY_ENTRY_BYTES) {
      const data = inflateEntry(entry, limits, budget);
      // "wx": never follow or replace anything that is already there.
      if (target) writeFileSync(target, data, { mode, flag: 'wx' });
      bytes = data.length;
    } else {
      bytes = await streamEntry(entry, limits, budget, target ? { path: target, mode } : null);
    }
    files++;
    bytesSinceYield += bytes;
    if (++sinceYield >= YIELD_EVERY_ENTRIES || bytesSinceYield >= YIELD_EVERY_BYTES) {
      sinceYield = 0;
      bytesSinceYield = 0;
      await new Promise((r) => setImmediate(r));
    }
  }
  return { files, bytes: limits.maxUnpackedBytes - budget.remaining };
}
