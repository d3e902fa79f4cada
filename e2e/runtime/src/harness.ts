import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import express, { type Express } from 'express';
import { hostPaths, type HostPaths, type RuntimeStatus, type StdioPluginRecord } from '@host/host-core';
import { ConsoleProvider, createConsoleRouter } from '@host/host-console';
import { Dispatcher } from '@host/host-dispatch';
import { FilePluginLogStore, groupAlive, StdioPluginRuntime, type RuntimeTimings } from '@host/host-runtime';
import { parseStdioManifest, type StdioManifestInput } from '@host/protocol';

/** The fixture folder, found from this file in jest or from the working directory in a bundled script. */
function findFixtureDir(): string {
  const candidates = [resolve(__dirname, '../../test-fixtures/misbehaving-plugin')];
  for (let dir = process.cwd(); dirname(dir) !== dir; dir = dirname(dir))
    candidates.push(join(dir, 'e2e/test-fixtures/misbehaving-plugin'));
  const found = candidates.find((d) => existsSync(join(d, 'plugin.mjs')));
  if (!found) throw new Error('e2e/test-fixtures/misbehaving-plugin not found; run from inside the workspace');
  return found;
}

export const FIXTURE_DIR = findFixtureDir();
export const FIXTURE_ID = 'com.example.misbehaving';

/** Timings short enough for tests, long enough for a loaded CI machine. */
export const TEST_TIMINGS: Partial<RuntimeTimings> = {
  initializeTimeoutMilliseconds: 5_000,
  stopGraceMilliseconds: 3_000,
  killAfterMilliseconds: 500,
  pingIntervalMilliseconds: 0,
  restartBaseDelayMilliseconds: 100,
  restartMaxDelayMilliseconds: 400,
  crashBudget: 3,
};

export interface PluginSpec {
  pluginId?: string;
  /** Arguments after `plugin.mjs --host-stdio` (mode and options). */
  args?: string[];
  /** Changes to the fixture manifest. */
  manifest?: Partial<StdioManifestInput>;
  /** Changes to transport.stdio (command, workingDirectory, environment). */
  stdio?: Partial<{ command: string; args: string[]; workingDirectory: string; environment: Record<string, string> }>;
}

export interface TestHost {
  paths: HostPaths;
  runtime: StdioPluginRuntime;
  dispatcher: Dispatcher;
  provider: ConsoleProvider;
  logs: FilePluginLogStore;
  app: Express;
  /** Every pid any plugin of this host ever had. */
  pids: Set<number>;
  install(spec?: PluginSpec): string;
  waitFor(pluginId: string, predicate: (s: RuntimeStatus) => boolean, timeoutMs?: number): Promise<RuntimeStatus>;
  /** Stops everything, checks that no process group is left, removes the data directory. */
  close(): Promise<void>;
}

export function fixtureManifest(pluginId: string, spec: PluginSpec): StdioManifestInput {
  const base = JSON.parse(readFileSync(join(FIXTURE_DIR, 'manifest.json'), 'utf8')) as StdioManifestInput;
  const manifest = { ...base, ...spec.manifest, pluginId };
  manifest.transport = {
    type: 'stdio-jsonrpc',
    // "node" is looked up on PATH, as a packaged Node plugin's manifest would have it.
    stdio: { command: 'node', args: ['plugin.mjs', '--host-stdio', ...(spec.args ?? [])], workingDirectory: '.', ...spec.stdio },
  };
  return manifest;
}

export function createTestHost(timings: Partial<RuntimeTimings> = {}): TestHost {
  const dataDir = mkdtempSync(join(tmpdir(), 'host-runtime-e2e-'));
  const paths = hostPaths(dataDir);
  const records = new Map<string, StdioPluginRecord>();
  const pids = new Set<number>();
  const logs = new FilePluginLogStore(paths, { flushDelayMilliseconds: 5 });
  const provider = new ConsoleProvider();
  // The runtime is created below; endpoints are only asked for at dispatch time.
  let runtime: StdioPluginRuntime | null = null;
  const dispatcher = new Dispatcher({ endpoints: () => runtime?.endpoints() ?? [] });
  dispatcher.providers.register(provider);
  runtime = new StdioPluginRuntime({
    paths,
    records: { get: async (id) => records.get(id) },
    logs,
    sink: dispatcher.sink,
    timings: { ...TEST_TIMINGS, ...timings },
    onStatusChange: (_id, s) => {
      if (s.pid !== undefined) pids.add(s.pid);
    },
  });
  const app = express();
  app.use('/api', createConsoleRouter({ dispatcher, provider }));
  const rt = runtime;

  return {
    paths,
    runtime: rt,
    dispatcher,
    provider,
    logs,
    app,
    pids,
    install(spec = {}) {
      const pluginId = spec.pluginId ?? FIXTURE_ID;
      const dir = paths.packageDir(pluginId);
      mkdirSync(dir, { recursive: true });
      copyFileSync(join(FIXTURE_DIR, 'plugin.mjs'), join(dir, 'plugin.mjs'));
      const manifest = fixtureManifest(pluginId, spec);
      writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
      const parsed = parseStdioManifest(manifest);
      if (!parsed.ok) throw new Error(`fixture manifest invalid: ${JSON.stringify(parsed.issues)}`);
      const now = new Date().toISOString();
      records.set(pluginId, {
        pluginId,
        transport: 'stdio-jsonrpc',
        manifest: parsed.value,
        installedAt: now,
        updatedAt: now,
        enabled: true,
        packageSha256: '0'.repeat(64),
      });
      return pluginId;
    },
    async waitFor(pluginId, predicate, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const s = rt.status(pluginId);
        if (s && predicate(s)) return s;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${pluginId}; status: ${JSON.stringify(s)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      await rt.dispose();
      await logs.flush();
      const alive = [...pids].filter((pid) => groupAlive(pid));
      rmSync(dataDir, { recursive: true, force: true });
      if (alive.length > 0) throw new Error(`process groups left running: ${alive.join(', ')}`);
    },
  };
}

/** Waits until no process of the group led by `pid` exists. */
export async function waitGone(pid: number, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!groupAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return !groupAlive(pid);
}

/**
 * True while a single process still runs (for a grandchild that left its group). A zombie, which has exited
 * and waits for the system's init to collect it, does not run, as groupAlive counts it.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!);
  } catch {
    return process.platform !== 'linux';
  }
}

/** Polls `check` until it holds; throws naming `what` after `timeoutMs`. For conditions no event announces. */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
