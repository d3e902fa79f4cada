import type { ArchiveBytes } from './archive-bytes';

/**
 * Uploaded update archives waiting for the operator's confirmation, each with
 * the description the installer made of it. The installer owns ids, expiry
 * and what a description contains; a store keeps bytes and JSON. The embedded
 * default is `<state>/pending/<id>.zip` and `<id>.json`.
 */
export interface PendingUpdateStore {
  /**
   * Keeps `archive` and its `description` (JSON-serialisable) under `id`: both or, on failure, neither.
   * An archive given as a reader is copied a piece at a time.
   */
  save(id: string, archive: ArchiveBytes, description: unknown): Promise<void>;
  /** The description saved under `id`; `undefined` when there is none or it cannot be read. */
  read(id: string): Promise<unknown>;
  /** The archive saved under `id`; `undefined` when it is missing. */
  readArchive(id: string): Promise<Uint8Array | undefined>;
  /**
   * The file holding the archive saved under `id`, for a store that keeps it as one, so that it is read in
   * ranges instead of whole; `undefined` when this store does not keep it in a file (then use readArchive).
   */
  archiveFile?(id: string): Promise<string | undefined>;
  /** Removes both; nothing happens when there is nothing under `id`. */
  delete(id: string): Promise<void>;
  /** The ids of every saved pending update. */
  list(): Promise<string[]>;
}
