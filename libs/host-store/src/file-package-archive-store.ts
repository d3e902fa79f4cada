import { archivePieces, archiveSha256, type ArchiveBytes } from '@host/host-core';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { isAtomicTempName, writeFileAtomic } from '@host/host-fs';
import { ArchiveDigestMismatchError, sha256Hex, type PackageArchiveStore } from './sql/package-archive-store';

const DIGEST = /^[0-9a-f]{64}$/;
const ARCHIVE_FILE = /^([0-9a-f]{64})\.zip$/;
/** A leftover of a put this old is from a host that stopped during it, not from one under way. */
const LEFTOVER_AGE_MILLISECONDS = 60 * 60_000;

/** Sets a file's times to now; answers whether it exists. */
async function touch(file: string): Promise<boolean> {
  const now = new Date();
  try {
    await fs.utimes(file, now, now);
    return true;
  } catch {
    return false;
  }
}

/**
 * Package archives as files named by their SHA-256 (`<dir>/<sha256>.zip`, mode 0600), for a host alone on its
 * data directory: the embedded database then holds no archive bytes, so an upload of any size costs the host a
 * piece of its size in memory, not the database's pages and log for every byte. Each file is written beside its
 * place and renamed into it once complete and synced, so a crash leaves the whole archive or none.
 *
 * `earlier` is where a host of an older version kept them (the database): archives found only there are read
 * from it and forgotten in it like the others, and none is written there any more.
 */
export class FilePackageArchiveStore implements PackageArchiveStore {
  constructor(
    private readonly dir: string,
    private readonly earlier?: PackageArchiveStore,
  ) {}

  private file(sha256: string): string {
    return join(this.dir, `${sha256}.zip`);
  }

  async put(archive: ArchiveBytes): Promise<string> {
    const sha256 = archiveSha256(archive);
    // Kept already: it counts as stored now for retainOnly's grace, as an install naming it is under way.
    if (await touch(this.file(sha256))) return sha256;
    if (await this.earlier?.has(sha256)) return sha256;
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.file(sha256), archivePieces(archive), { mode: 0o600 });
    return sha256;
  }

  async get(sha256: string): Promise<Uint8Array | undefined> {
    if (!DIGEST.test(sha256)) return undefined;
    let bytes: Uint8Array;
    try {
      bytes = await fs.readFile(this.file(sha256));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      return this.earlier?.get(sha256);
    }
    if (sha256Hex(bytes) !== sha256) throw new ArchiveDigestMismatchError(sha256);
    return bytes;
  }

  async has(sha256: string): Promise<boolean> {
    if (!DIGEST.test(sha256)) return false;
    try {
      await fs.access(this.file(sha256));
      return true;
    } catch {
      return (await this.earlier?.has(sha256)) ?? false;
    }
  }

  /**
   * Puts every archive kept here that `target` lacks into it (a data directory moved from the embedded database to
   * a PostgreSQL server, whose replicas fetch archives from the database); the files stay. Answers how many.
   */
  async copyInto(target: PackageArchiveStore): Promise<number> {
    let copied = 0;
    for (const name of await fs.readdir(this.dir).catch(() => [] as string[])) {
      const digest = ARCHIVE_FILE.exec(name)?.[1];
      if (digest === undefined || (await target.has(digest))) continue;
      const bytes = await this.get(digest);
      if (bytes) {
        await target.put(bytes);
        copied++;
      }
    }
    return copied;
  }

  async retainOnly(keep: ReadonlySet<string>, graceMilliseconds = 0): Promise<number> {
    let removed = (await this.earlier?.retainOnly(keep, graceMilliseconds)) ?? 0;
    let names: string[];
    try {
      names = await fs.readdir(this.dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return removed;
      throw e;
    }
    const now = Date.now();
    for (const name of names) {
      const digest = ARCHIVE_FILE.exec(name)?.[1];
      const leftover = isAtomicTempName(name);
      if (!leftover && (digest === undefined || keep.has(digest))) continue;
      const path = join(this.dir, name);
      const stat = await fs.stat(path).catch(() => undefined);
      if (!stat || now - stat.mtimeMs < (leftover ? LEFTOVER_AGE_MILLISECONDS : graceMilliseconds)) continue;
      await fs.rm(path, { force: true });
      if (!leftover) removed++;
    }
    return removed;
  }
}
