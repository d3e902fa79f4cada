import { createHash } from 'node:crypto';

/**
 * A package archive read in ranges (an uploaded file on disk), so a store can
 * keep it, and the installer check it, without holding all of it at once.
 */
export interface ArchiveReader {
  /** Bytes in the archive. */
  readonly size: number;
  /** `length` bytes from `position`; fewer only at the end of the archive. */
  read(position: number, length: number): Uint8Array;
}

/** An archive in memory or one read in ranges. */
export type ArchiveBytes = Uint8Array | ArchiveReader;

/** Pieces read from a reader at once: large enough for few reads, small beside any archive. */
export const ARCHIVE_PIECE_BYTES = 1024 * 1024;

export function archiveSize(archive: ArchiveBytes): number {
  return archive instanceof Uint8Array ? archive.byteLength : archive.size;
}

/**
 * The archive's bytes in order, at most `pieceBytes` at a time (views of an
 * archive in memory, fresh reads of a reader).
 */
export function* archivePieces(archive: ArchiveBytes, pieceBytes = ARCHIVE_PIECE_BYTES): Generator<Uint8Array> {
  const size = archiveSize(archive);
  for (let at = 0; at < size; at += pieceBytes) {
    const length = Math.min(pieceBytes, size - at);
    const piece = archive instanceof Uint8Array ? archive.subarray(at, at + length) : archive.read(at, length);
    if (piece.byteLength !== length) throw new Error(`The archive ended at byte ${at + piece.byteLength} of ${size} while it was read.`);
    yield piece;
  }
}

/** SHA-256 of the archive in lowercase hex, read piece by piece. */
export function archiveSha256(archive: ArchiveBytes): string {
  const hash = createHash('sha256');
  for (const piece of archivePieces(archive)) hash.update(piece);
  return hash.digest('hex');
}
