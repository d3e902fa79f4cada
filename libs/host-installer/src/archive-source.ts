import { hashArchive, type ArchiveReader } from '@host/host-core';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/**
 * An archive the installer reads in ranges: an uploaded file through its
 * descriptor, or bytes already in memory. Reads are synchronous: the checks
 * read thousands of small ranges, where a promise per read costs more than
 * the read.
 */
export interface ArchiveSource extends ArchiveReader {
  read(position: number, length: number, into?: Uint8Array): Buffer;
  /** SHA-256 of the whole archive in lowercase hex, read piece by piece. */
  sha256(): string;
  /** Releases the file; reads after it fail. Nothing happens for bytes in memory. */
  close(): void;
}

/** An archive given as a buffer. */
export function bufferSource(bytes: Uint8Array): ArchiveSource {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let digest: string | undefined;
  return {
    size: buffer.length,
    read: (position, length) => buffer.subarray(Math.min(position, buffer.length), Math.min(position + length, buffer.length)),
    sha256: () => (digest ??= hashArchive(buffer)),
    close: () => undefined,
  };
}

/**
 * An archive file opened for reading. Its size is taken once, at opening: the
 * file is the host's own copy of an upload, which nothing else writes.
 */
export function openFileSource(path: string): ArchiveSource {
  const fd = openSync(path, 'r');
  let size: number;
  try {
    size = fstatSync(fd).size;
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  let open = true;
  let digest: string | undefined;
  const source: ArchiveSource = {
    size,
    read(position, length, into) {
      const wanted = Math.max(0, Math.min(length, size - position));
      const out = into && into.byteLength >= wanted ? Buffer.from(into.buffer, into.byteOffset, wanted) : Buffer.allocUnsafe(wanted);
      let got = 0;
      while (got < wanted) {
        const n = readSync(fd, out, got, wanted - got, position + got);
        if (n === 0) break;
        got += n;
      }
      return got === wanted ? out : out.subarray(0, got);
    },
    sha256: () => (digest ??= hashArchive(source)),
    close() {
      if (!open) return;
      open = false;
      closeSync(fd);
    },
  };
  return source;
}

/** What the installer accepts as a package: the bytes, or the path of a file holding them. */
export type PackageInput = Uint8Array | { file: string };

/** Opens `input` for reading; the caller closes it. */
export function openPackage(input: PackageInput): ArchiveSource {
  return input instanceof Uint8Array ? bufferSource(input) : openFileSource(input.file);
}
