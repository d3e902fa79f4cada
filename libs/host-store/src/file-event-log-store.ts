import { interruptDeliveries, type EventRecord } from '@host/host-core';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { isAtomicTempName, writeFileAtomic } from '@host/host-fs';
import { MemoryEventLogStore } from './memory-event-log-store';
import { WriteBehindEventLog, type SerialisedChange, type WriteBehindOptions } from './write-behind-event-log';

/** The event log's file in its directory. */
export const EVENT_LOG_FILE_NAME = 'events.jsonl';

export interface FileEventLogStoreOptions extends WriteBehindOptions {
  /**
   * The file is rewritten as a snapshot of the kept records once this many
   * bytes were appended since the last snapshot (default 8 MiB), or more
   * lines than four times the capacity.
   */
  maxAppendedBytes?: number;
}

/**
 * One line of the file. `snapshot` starts a file and means "nothing before";
 * `event` keeps the record as the newest; `update` replaces a kept record in
 * its place. Every line carries the whole record as it was when written.
 */
type Line = { op: 'snapshot'; formatVersion: 1 } | { op: 'event' | 'update'; record: EventRecord };

function isRecord(value: unknown): value is EventRecord {
  const r = value as EventRecord | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.eventId === 'string' &&
    typeof r.source === 'string' &&
    typeof r.event === 'object' &&
    r.event !== null &&
    Array.isArray(r.recipients) &&
    Array.isArray(r.deliveries) &&
    r.deliveries.every((d) => typeof d === 'object' && d !== null && typeof d.state === 'string') &&
    Array.isArray(r.outbound)
  );
}

/**
 * The embedded event log: the newest `capacity` events in memory, written
 * behind to `<dir>/events.jsonl` (mode 0600: events carry what users wrote).
 *
 * Changes are collected and appended every `flushIntervalMilliseconds` as
 * JSON lines, one per changed record however often it changed. When the file
 * has grown by `maxAppendedBytes`, it is replaced atomically by a snapshot of
 * the kept records (rotation), so it stays bounded. On open the file is read
 * back: a line torn by a crash is skipped, later lines of an event replace
 * earlier ones, only the newest `capacity` events are kept, and deliveries
 * that were not final are marked `interrupted`; then a fresh snapshot is written.
 */
export class FileEventLogStore extends WriteBehindEventLog {
  readonly file: string;
  private handle: fs.FileHandle | undefined;
  private appendedBytes = 0;
  private appendedLines = 0;

  private constructor(
    readonly dir: string,
    window: MemoryEventLogStore,
    private readonly o: FileEventLogStoreOptions,
  ) {
    super(window, o);
    this.file = join(dir, EVENT_LOG_FILE_NAME);
  }

  /** Loads what an earlier run left in `dir` (created if missing) and starts a new file from it. */
  static async open(dir: string, options: FileEventLogStoreOptions = {}): Promise<FileEventLogStore> {
    await fs.mkdir(dir, { recursive: true });
    for (const name of await fs.readdir(dir)) if (isAtomicTempName(name)) await fs.rm(join(dir, name), { force: true });
    const window = new MemoryEventLogStore(options);
    const store = new FileEventLogStore(dir, window, options);
    const at = new Date(store.now()).toISOString();
    for (const record of await readRecords(store.file)) {
      interruptDeliveries(record, at);
      window.append(record);
    }
    await store.writes.run(() => store.rewrite());
    return store;
  }

  /** Appends a line per changed record, or rewrites the file when it has grown enough. */
  protected async write(batch: SerialisedChange[]): Promise<void> {
    const maxBytes = this.o.maxAppendedBytes ?? 8 * 1024 * 1024;
    if (this.appendedBytes >= maxBytes || this.appendedLines >= 4 * this.capacity) return this.rewrite();
    if (batch.length === 0) return;
    const text = batch.map((c) => recordLine(c.op, c.json)).join('');
    this.handle ??= await fs.open(this.file, 'a', 0o600);
    await this.handle.write(text);
    await this.handle.datasync();
    this.appendedBytes += Buffer.byteLength(text);
    this.appendedLines += batch.length;
  }

  protected override async release(): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
  }

  /** Replaces the file by a snapshot of the kept records, oldest first. */
  private async rewrite(): Promise<void> {
    let text = lineOf({ op: 'snapshot', formatVersion: 1 });
    for (const record of this.window.all()) {
      const json = this.serialise(record);
      if (json !== undefined) text += recordLine('event', json);
    }
    await this.handle?.close();
    this.handle = undefined;
    await writeFileAtomic(this.file, text, { mode: 0o600 });
    this.appendedBytes = 0;
    this.appendedLines = 0;
  }
}

function lineOf(line: Line): string {
  return JSON.stringify(line) + '\n';
}

/** The line of a record whose JSON text is made already: what lineOf gives for `{op, record}`. */
function recordLine(op: 'event' | 'update', json: string): string {
  return `{"op":"${op}","record":${json}}\n`;
}

/** The records the file holds, oldest first, each as its last line left it. */
async function readRecords(file: string): Promise<EventRecord[]> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  // Map order is the order events took their place: `event` moves an id to the end, `update` keeps it.
  const records = new Map<string, EventRecord>();
  for (const raw of text.split('\n')) {
    if (!raw) continue;
    let line: Line;
    try {
      line = JSON.parse(raw) as Line;
    } catch {
      continue; // torn by a crash in the middle of a write
    }
    if (line?.op === 'snapshot') records.clear();
    else if (line?.op === 'event' && isRecord(line.record)) {
      records.delete(line.record.eventId);
      records.set(line.record.eventId, line.record);
    } else if (line?.op === 'update' && isRecord(line.record) && records.has(line.record.eventId)) {
      records.set(line.record.eventId, line.record);
    }
  }
  return [...records.values()];
}
