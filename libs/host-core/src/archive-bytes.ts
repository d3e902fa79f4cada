import { createHash } from 'node:crypto';

/**
 * A package archive read in ranges (an uploaded file on disk), so a store can
 * keep it, and the installer check it, without holding all of it at once.
 */
export interface ArchiveReader {
  /** Bytes in the archive. */
  readonly size: number;
  /**
   * `length` bytes from `position`; fewer only at the end of the archive. With `into` (at least `length`
   * bytes), a reader may fill it and answer a view of it instead of allocating: a pass over a large archive
   * then reuses one buffer instead of leaving the whole archive behind as garbage.
   */
  read(position: number, length: number, into?: Uint8Array): Uint8Array;
  /**
   * The archive's SHA-256 in lowercase hex, when the reader keeps it (worked out once, on the first call): a
   * store that keeps the archive then reads it once, to write it, instead of once more to hash it.
   */
  sha256?(): string;
}

/** An archive in memory or one read in ranges. */
export type ArchiveBytes = Uint8Array | ArchiveReader;

/** Pieces read from a reader at once: large enough for few reads, small beside any archive. */
export const ARCHIVE_PIECE_BYTES = 1024 * 1024;

export function archiveSize(archive: ArchiveBytes): number {
  return archive instanceof Uint8Array ? archive.byteLength : archive.size;
}

/**
 * The archive's bytes in order, at most `pieceBytes` at a time: views of an
 * archive in memory, or of one buffer a reader fills again for each piece.
 * Use each piece before asking for the next.
 */
export function* archivePieces(archive: ArchiveBytes, pieceBytes = ARCHIVE_PIECE_BYTES): Generator<Uint8Array> {
  const size = archiveSize(archive);
  const scratch = archive instanceof Uint8Array ? undefined : new Uint8Array(Math.min(pieceBytes, size));
  for (let at = 0; at < size; at += pieceBytes) {
    const length = Math.min(pieceBytes, size - at);
    const piece = archive instanceof Uint8Array ? archive.subarray(at, at + length) : archive.read(at, length, scratch);
    if (piece.byteLength !== length) throw new Error(`The archive ended at byte ${at + piece.byteLength} of ${size} while it was read.`);
    yield piece;
  }
}

/** SHA-256 of the archive in lowercase hex: the one its reader keeps, else read piece by piece. */
export function archiveSha256(archive: ArchiveBytes): string {
  return !(archive instanceof Uint8Array) && archive.sha256 ? archive.sha256() : hashArchive(archive);
}

/** SHA-256 of the archive's bytes, read piece by piece (what a reader that keeps its digest works it out with). */
export function hashArchive(archive: ArchiveBytes): string {
  const hash = createHash('sha256');
  for (const piece of archivePieces(archive)) hash.update(piece);
  return hash.digest('hex');
}
