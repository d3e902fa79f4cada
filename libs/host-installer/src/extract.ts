import { HostError } from '@host/host-core';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
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

/**
 * Inflates one entry, counting real output bytes: inflation stops as soon as
 * the entry passes its declared size, the compression-ratio cap or what is
 * left of the total budget, so a bomb never gets to allocate its payload.
 */
export function inflateEntry(entry: ArchiveEntry, limits: InstallLimits, budget: UnpackBudget): Buffer {
  let compressed: Buffer;
  try {
    compressed = entry.source.getCompressedData();
  } catch (e) {
    throw corrupt(entry, `cannot be located in the archive (${(e as Error).message})`);
  }
  if (compressed.length !== entry.compressedSize) throw corrupt(entry, 'is truncated');
  // The local header is read only now; it must agree with the central directory.
  const local = (entry.source.header as unknown as { localHeader: { flags: number; method: number } }).localHeader;
  if (local.flags & 0x41) {
    throw new HostError(
      'INSTALL_ENCRYPTED_ENTRY',
      `Entry "${printableName(entry.path)}" is encrypted. Build the package without a password.`,
      { entry: entry.path },
    );
  }
  if (local.method !== entry.method) throw corrupt(entry, 'has a local header that disagrees with the central directory');
  const ratioCap = Math.max(limits.ratioThresholdBytes, entry.compressedSize * limits.maxCompressionRatio);
  const cap = Math.min(entry.declaredSize, budget.remaining, ratioCap);
  let data: Buffer;
  if (entry.method === 0) {
    data = compressed;
    if (data.length > budget.remaining) throw tooLarge(limits, entry);
  } else {
    try {
      data = inflateRawSync(compressed, { maxOutputLength: Math.max(1, cap) });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ERR_BUFFER_TOO_LARGE')
        throw corrupt(entry, `has damaged compressed data (${(e as Error).message})`);
      if (cap === budget.remaining) throw tooLarge(limits, entry);
      if (cap === ratioCap) {
        throw new HostError(
          'INSTALL_COMPRESSION_RATIO',
          `Entry "${printableName(entry.path)}" expands more than ${limits.maxCompressionRatio} times its compressed size (${entry.compressedSize} bytes compressed). This is how zip bombs look: package ordinary files.`,
          { entry: entry.path, limit: limits.maxCompressionRatio },
        );
      }
      throw corrupt(entry, `unpacks to more than the ${entry.declaredSize} bytes its header declares`);
    }
  }
  if (data.length !== entry.declaredSize)
    throw corrupt(entry, `unpacks to ${data.length} bytes, not the ${entry.declaredSize} it declares`);
  if (crc32(data) !== entry.crc) throw corrupt(entry, 'fails its CRC-32 check');
  budget.remaining -= data.length;
  return data;
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
    const data = inflateEntry(entry, limits, budget);
    if (destination) {
      const target = join(destination, path);
      ensureDir(dirname(target));
      // "wx": never follow or replace anything that is already there.
      writeFileSync(target, data, { mode, flag: 'wx' });
    }
    files++;
    bytesSinceYield += data.length;
    if (++sinceYield >= YIELD_EVERY_ENTRIES || bytesSinceYield >= YIELD_EVERY_BYTES) {
      sinceYield = 0;
      bytesSinceYield = 0;
      await new Promise((r) => setImmediate(r));
    }
  }
  return { files, bytes: limits.maxUnpackedBytes - budget.remaining };
}
