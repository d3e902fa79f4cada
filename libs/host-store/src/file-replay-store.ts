import { MemoryReplayStore, replayEntryName, SerialQueue, type ReplayStore, type ReplayStoreBounds } from '@host/host-core';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { isAtomicTempName, writeFileAtomic } from '@host/host-fs';

/** The webhook replay memory's file in the state directory. */
export const REPLAY_FILE_NAME = 'webhook-replays.jsonl';

export interface FileReplayStoreOptions extends ReplayStoreBounds {
  /** The clock expiries are compared with when the file is read back (default Date.now). */
  now?: () => number;
}

/** One line of the file: `k` is an entry's name (scope and key), remembered until `x` (milliseconds) or, with `f`, forgotten. */
type Line = { k: string; x: number } | { k: string; f: 1 };

/**
 * The replay memory of the file store: the keys in memory, each claim and
 * forget appended to `<state>/webhook-replays.jsonl` (mode 0600) and synced
 * before it is answered, so a request the webhook took is still refused
 * after a crash or restart. Claims that arrive together share one write and
 * one sync. The file is replaced atomically by a snapshot of the live keys
 * when it is opened and whenever its appended lines outnumber them, so it
 * stays bounded by the keys' count (maxEntries) and time.
 *
 * Only one host uses a data directory (its lock), so the memory decides
 * alone and at once: two claims of one key never both succeed.
 */
export class FileReplayStore implements ReplayStore {
  readonly file: string;
  private readonly writes = new SerialQueue();
  private pending: string[] = [];
  private handle: fs.FileHandle | undefined;
  private appendedLines = 0;

  private constructor(
    dir: string,
    private readonly memory: MemoryReplayStore,
    private readonly now: () => number,
  ) {
    this.file = join(dir, REPLAY_FILE_NAME);
  }

  /** Reads what an earlier run left in `dir` (created if missing), without the expired keys, and starts a new file from it. */
  static async open(dir: string, o: FileReplayStoreOptions = {}): Promise<FileReplayStore> {
    await fs.mkdir(dir, { recursive: true });
    const store = new FileReplayStore(dir, new MemoryReplayStore(o), o.now ?? Date.now);
    for (const name of await fs.readdir(dir))
      if (isAtomicTempName(name) && name.startsWith(`.${REPLAY_FILE_NAME}.`)) await fs.rm(join(dir, name), { force: true });
    await store.load();
    await store.writes.run(() => store.rewrite());
    return store;
  }

  /** Keys remembered now (expired ones included until the next claim drops them). */
  get size(): number {
    return this.memory.size;
  }

  async claim(scope: string, keys: readonly string[], nowMs: number, expiresMs: number): Promise<boolean> {
    if (!this.memory.claimNow(scope, keys, nowMs, expiresMs)) return false;
    const names = keys.map((k) => replayEntryName(scope, k));
    try {
      await this.append(names.map((k) => lineOf({ k, x: expiresMs })));
    } catch (e) {
      // Not on disk: not taken either, so the platform's next push is no replay.
      for (const n of names) this.memory.remove(n);
      throw e;
    }
    return true;
  }

  async forget(scope: string, keys: readonly string[]): Promise<void> {
    this.memory.forgetNow(scope, keys);
    await this.append(keys.map((k) => lineOf({ k: replayEntryName(scope, k), f: 1 })));
  }

  /** Waits for pending writes and closes the file. */
  async close(): Promise<void> {
    await this.writes.idle();
    await this.handle?.close();
    this.handle = undefined;
  }

  /** Queues `lines` and resolves once they are synced; lines queued meanwhile go in the same write. */
  private append(lines: string[]): Promise<void> {
    this.pending.push(...lines);
    return this.writes.run(async () => {
      if (this.pending.length === 0) return; // written by an earlier task of this batch
      const batch = this.pending;
      this.pending = [];
      if (this.appendedLines + batch.length > Math.max(1000, 2 * this.memory.size)) return this.rewrite();
      this.handle ??= await fs.open(this.file, 'a', 0o600);
      await this.handle.write(batch.join(''));
      await this.handle.datasync();
      this.appendedLines += batch.length;
    });
  }

  /** Replaces the file by a snapshot of the keys not expired, oldest first. */
  private async rewrite(): Promise<void> {
    let text = '';
    for (const [k, x] of this.memory.entries(this.now())) text += lineOf({ k, x });
    await this.handle?.close();
    this.handle = undefined;
    await writeFileAtomic(this.file, text, { mode: 0o600 });
    this.appendedLines = 0;
  }

  private async load(): Promise<void> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    const now = this.now();
    for (const raw of text.split('\n')) {
      if (!raw) continue;
      let line: Partial<{ k: unknown; x: unknown; f: unknown }>;
      try {
        line = JSON.parse(raw) as typeof line;
      } catch {
        continue; // torn by a crash in the middle of a write
      }
      if (typeof line !== 'object' || line === null || typeof line.k !== 'string') continue;
      if (line.f === 1) this.memory.remove(line.k);
      else if (typeof line.x === 'number' && line.x > now) this.memory.restore(line.k, line.x);
    }
  }
}

function lineOf(line: Line): string {
  return JSON.stringify(line) + '\n';
}
