/**
 * Limits the installer enforces while it extracts an archive. They are counted
 * on the bytes actually inflated, never taken from the archive's headers.
 */
export interface InstallLimits {
  /** Most entries (files and folders) in one archive. */
  maxEntries: number;
  /** Most bytes of all entries together once unpacked. */
  maxUnpackedBytes: number;
  /** Highest unpacked:compressed ratio of one entry... */
  maxCompressionRatio: number;
  /** ...applied to entries that unpack to more than this many bytes (small files compress well legitimately). */
  ratioThresholdBytes: number;
}

export const DEFAULT_INSTALL_LIMITS: InstallLimits = {
  maxEntries: 20_000,
  maxUnpackedBytes: 512 * 1024 * 1024,
  maxCompressionRatio: 200,
  ratioThresholdBytes: 1024 * 1024,
};

/** How long a pending update waits for confirmation. */
export const PENDING_UPDATE_TTL_MS = 60 * 60 * 1000;

/** Backups kept per plugin; older ones are deleted after each update. */
export const BACKUPS_KEPT = 3;

export { formatBytes } from '@host/protocol';
