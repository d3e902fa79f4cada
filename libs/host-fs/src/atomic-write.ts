import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Makes a rename or a new directory entry durable: on POSIX file systems the
 * entry lives in the parent directory, which needs its own fsync. Windows
 * cannot open a directory for fsync, and does not need it, so errors there are
 * ignored.
 */
export async function fsyncDir(dir: string): Promise<void> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch (e) {
    if (process.platform !== 'win32') throw e;
  } finally {
    await handle?.close();
  }
}

export interface AtomicWriteOptions {
  /** File mode of the new file (default 0o644; secrets use 0o600). */
  mode?: number;
}

/**
 * Replaces `file` with `data` so that a crash at any moment leaves either the
 * old content or the new one, never a torn file: write a temporary file in the
 * same directory, fsync it, rename it over the target, fsync the directory.
 */
export async function writeFileAtomic(
  file: string,
  data: string | Uint8Array | Iterable<Uint8Array>,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const dir = dirname(file);
  const tmp = join(dir, `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await fs.open(tmp, 'wx', options.mode ?? 0o644);
  try {
    try {
      if (typeof data === 'string' || data instanceof Uint8Array) await handle.writeFile(data);
      else for (const piece of data) for (let at = 0; at < piece.byteLength;) at += (await handle.write(piece, at)).bytesWritten;
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(tmp, file);
  } catch (e) {
    await fs.rm(tmp, { force: true });
    throw e;
  }
  await fsyncDir(dir);
}

/** Writes JSON atomically, pretty-printed with a trailing newline. */
export function writeJsonAtomic(file: string, value: unknown, options: AtomicWriteOptions = {}): Promise<void> {
  return writeFileAtomic(file, JSON.stringify(value, null, 2) + '\n', options);
}

/** Reads a JSON file; `undefined` when it does not exist. */
export async function readJsonFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  return JSON.parse(text);
}

/** Temporary files left by a write that crashed before its rename. */
export function isAtomicTempName(name: string): boolean {
  return /^\..+\.[0-9a-f]{12}\.tmp$/.test(name);
}
