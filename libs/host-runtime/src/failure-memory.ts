import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { SerialQueue, type RuntimeStatus } from '@host/host-core';
import { writeJsonAtomic } from '@host/host-fs';

export const FAILURE_MEMORY_FILE = 'failed-plugins.json';

interface Failure {
  reason: string;
  at: string;
}

/**
 * Remembers, in `<state>/failed-plugins.json`, the stdio plugins whose last
 * state was `failed` and why, so a host that restarts shows them as failed
 * with their reason instead of as freshly `installed`. A plugin that runs
 * again, or that the operator stops or uninstalls, is forgotten.
 */
export class FailureMemory {
  private readonly file: string;
  private readonly failures: Record<string, Failure>;
  private readonly writes = new SerialQueue();

  constructor(stateDir: string) {
    this.file = join(stateDir, FAILURE_MEMORY_FILE);
    this.failures = readFailures(this.file);
  }

  /** The status of a plugin this host process has not touched yet, when it had failed before. */
  remembered(pluginId: string): RuntimeStatus | undefined {
    const f = this.failures[pluginId];
    return f ? { state: 'failed', stateReason: `${f.reason} (at ${f.at}, before the host restarted)`, crashCount: 0 } : undefined;
  }

  /**
   * Follows a supervisor's state: a failure is kept; a new start clears it.
   * Stopping does not (the host's own shutdown stops failed plugins too); an
   * operator's stop calls `forget`.
   */
  observe(pluginId: string, status: RuntimeStatus, now: Date): void {
    if (status.state === 'failed') this.set(pluginId, { reason: status.stateReason ?? 'failed', at: now.toISOString() });
    else if (status.state === 'starting' || status.state === 'running') this.forget(pluginId);
  }

  forget(pluginId: string): void {
    if (!(pluginId in this.failures)) return;
    delete this.failures[pluginId];
    this.persist();
  }

  /** Waits for the writes made so far. */
  flushed(): Promise<void> {
    return this.writes.idle();
  }

  private set(pluginId: string, failure: Failure): void {
    this.failures[pluginId] = failure;
    this.persist();
  }

  private persist(): void {
    const snapshot = { ...this.failures };
    void this.writes
      .run(async () => {
        await mkdir(dirname(this.file), { recursive: true });
        await writeJsonAtomic(this.file, snapshot, { mode: 0o600 });
      })
      .catch(() => undefined); // a lost write only loses the reason shown after a restart
  }
}

function readFailures(file: string): Record<string, Failure> {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    const out: Record<string, Failure> = Object.create(null);
    if (parsed && typeof parsed === 'object') {
      for (const [id, f] of Object.entries(parsed as Record<string, Partial<Failure>>)) {
        if (typeof f?.reason === 'string' && typeof f.at === 'string') out[id] = { reason: f.reason, at: f.at };
      }
    }
    return out;
  } catch {
    return Object.create(null);
  }
}
