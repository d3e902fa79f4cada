import { appendFile, mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { HostPaths, LogLine, PluginLogStore } from '@host/host-core';
import { SerialQueue } from '@host/host-core';
import { LIMITS } from '@host/protocol';
import { capLogLine } from './line-limits';

export interface FileLogStoreOptions {
  /** Size at which `plugin.log` is rotated to `plugin.log.1`. */
  maxFileBytes?: number;
  /** Files kept per plugin, the current one included. */
  maxFiles?: number;
  /**
   * Bytes a plugin may have waiting for the disk. Past this, lines are counted
   * and dropped (a marker line says how many), so a plugin flooding stderr
   * cannot grow host memory.
   */
  maxPendingBytes?: number;
  /** Batching delay before pending lines are written. */
  flushDelayMilliseconds?: number;
}

export const LOG_FILE_NAME = 'plugin.log';

interface PluginLogState {
  dir: string;
  pending: string[];
  pendingBytes: number;
  dropped: number;
  size: number | null;
  timer: NodeJS.Timeout | null;
  writes: SerialQueue;
}

export type LogListener = (pluginId: string, line: LogLine) => void;

/**
 * Plugin logs as JSON lines in `<data>/logs/<pluginId>/plugin.log`, rotated by
 * size (`plugin.log.1` is the previous file, ...). Appends are synchronous and
 * cheap: lines are batched in memory and written in order by one write chain
 * per plugin.
 */
export class FilePluginLogStore implements PluginLogStore {
  private readonly states = new Map<string, PluginLogState>();
  private readonly listeners = new Set<LogListener>();
  private readonly maxFileBytes: number;
  private readonly maxFiles: number;
  private readonly maxPendingBytes: number;
  private readonly flushDelay: number;

  constructor(
    private readonly paths: Pick<HostPaths, 'logDirOf'>,
    options: FileLogStoreOptions = {},
  ) {
    this.maxFileBytes = options.maxFileBytes ?? 1024 * 1024;
    this.maxFiles = Math.max(1, options.maxFiles ?? 3);
    this.maxPendingBytes = options.maxPendingBytes ?? 256 * 1024;
    this.flushDelay = options.flushDelayMilliseconds ?? 20;
  }

  append(pluginId: string, line: LogLine): void {
    const capped = capLine(line);
    for (const l of this.listeners) l(pluginId, capped);
    const state = this.state(pluginId);
    const text = JSON.stringify(capped) + '\n';
    if (state.pendingBytes + text.length > this.maxPendingBytes) {
      state.dropped++;
    } else {
      state.pending.push(text);
      state.pendingBytes += text.length;
    }
    if (!state.timer) {
      state.timer = setTimeout(() => this.schedule(state), this.flushDelay);
      state.timer.unref();
    }
  }

  /** Calls `listener` for every line appended from now on; returns the unsubscribe function. */
  subscribe(listener: LogListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async tail(pluginId: string, lines: number): Promise<LogLine[]> {
    const state = this.states.get(pluginId);
    if (state) await this.schedule(state);
    const dir = this.paths.logDirOf(pluginId);
    const out: LogLine[] = [];
    for (let i = 0; i < this.maxFiles && out.length < lines; i++) {
      const text = await readFile(join(dir, fileName(i)), 'utf8').catch(() => null);
      if (text === null) break;
      const parsed = text.split('\n').flatMap(parseLine);
      out.unshift(...parsed.slice(Math.max(0, parsed.length - (lines - out.length))));
    }
    return out;
  }

  /**
   * The newest `max` lines of `pluginId` written for `eventId`, oldest first,
   * from the same bounded files `tail` reads (newest file first, so the search
   * stops as soon as it has enough). A line is parsed only when its text names
   * the event, so a search costs a scan of at most `maxFiles` files.
   */
  async linesOfEvent(pluginId: string, eventId: string, max: number): Promise<LogLine[]> {
    const state = this.states.get(pluginId);
    if (state) await this.schedule(state);
    const dir = this.paths.logDirOf(pluginId);
    const needle = `"eventId":${JSON.stringify(eventId)}`;
    const out: LogLine[] = [];
    for (let i = 0; i < this.maxFiles && out.length < max; i++) {
      const text = await readFile(join(dir, fileName(i)), 'utf8').catch(() => null);
      if (text === null) break;
      const found = text
        .split('\n')
        .filter((l) => l.includes(needle))
        .flatMap(parseLine)
        .filter((l) => l.eventId === eventId);
      out.unshift(...found.slice(Math.max(0, found.length - (max - out.length))));
    }
    return out;
  }

  async flush(): Promise<void> {
    await Promise.all([...this.states.values()].map((s) => this.schedule(s)));
  }

  private state(pluginId: string): PluginLogState {
    let s = this.states.get(pluginId);
    if (!s) {
      s = {
        dir: this.paths.logDirOf(pluginId),
        pending: [],
        pendingBytes: 0,
        dropped: 0,
        size: null,
        timer: null,
        writes: new SerialQueue(),
      };
      this.states.set(pluginId, s);
    }
    return s;
  }

  private schedule(state: PluginLogState): Promise<void> {
    if (state.timer) clearTimeout(state.timer);
    state.timer = null;
    return state.writes.run(() => this.write(state)).catch(() => undefined);
  }

  private async write(state: PluginLogState): Promise<void> {
    if (state.pending.length === 0 && state.dropped === 0) return;
    let text = state.pending.join('');
    if (state.dropped > 0) {
      const marker: LogLine = {
        at: new Date().toISOString(),
        stream: 'host',
        level: 'warn',
        message: `${state.dropped} log lines dropped: the plugin wrote faster than the log is written`,
      };
      text += JSON.stringify(marker) + '\n';
    }
    state.pending = [];
    state.pendingBytes = 0;
    state.dropped = 0;
    await mkdir(state.dir, { recursive: true });
    if (state.size === null)
      state.size = await stat(join(state.dir, LOG_FILE_NAME)).then(
        (s) => s.size,
        () => 0,
      );
    const bytes = Buffer.byteLength(text);
    if (state.size > 0 && state.size + bytes > this.maxFileBytes) {
      await this.rotate(state.dir);
      state.size = 0;
    }
    await appendFile(join(state.dir, LOG_FILE_NAME), text);
    state.size += bytes;
  }

  private async rotate(dir: string): Promise<void> {
    await rm(join(dir, fileName(this.maxFiles - 1)), { force: true });
    for (let i = this.maxFiles - 2; i >= 0; i--) {
      await rename(join(dir, fileName(i)), join(dir, fileName(i + 1))).catch(() => undefined);
    }
  }
}

function fileName(index: number): string {
  return index === 0 ? LOG_FILE_NAME : `${LOG_FILE_NAME}.${index}`;
}

/**
 * A line within LIMITS.maxLogLineChars: its message and its fields' JSON together. Fields that do not fit
 * become text at the end of the message (cut with the rest), so a line never outgrows the limit.
 */
function capLine(line: LogLine): LogLine {
  if (line.fields === undefined) return { ...line, message: capLogLine(line.message) };
  const fields = JSON.stringify(line.fields);
  if (line.message.length + 1 + fields.length <= LIMITS.maxLogLineChars) return line;
  const flat: LogLine = { ...line, message: capLogLine(`${line.message} ${fields}`) };
  delete flat.fields;
  return flat;
}

function parseLine(text: string): LogLine[] {
  if (!text) return [];
  try {
    const v = JSON.parse(text) as LogLine;
    return typeof v.message === 'string' ? [v] : [];
  } catch {
    return [];
  }
}
