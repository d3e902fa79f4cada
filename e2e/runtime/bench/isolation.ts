// What plugin isolation costs: plugin start time and stdio exchange throughput in each isolation mode this
// machine offers, measured in one run and taking turns, as ratios to same-user (and to a host without the
// isolating runner, as before isolation existed). Not a test: it reports numbers.
//
//   none       the StdioPluginRuntime with its plain runner (no isolation option)
//   same-user  the isolating runner in same-user mode: the host's user, rlimits or a cgroup
//   own-user   a uid of the plugin's own (root only)
//   sandbox    its own uid inside bubblewrap (root with bubblewrap only)
//
// A start is runtime.start() of the fixture plugin until its handshake is done (from a stopped plugin);
// an exchange is the one of run.ts (dispatch "/echo <b>hi</b>", ACK, messages.reply, events.completed).
// The modes take turns in a new order each round, and each ratio is the median of the rounds' own ratios
// (modes measured seconds apart), so a busy moment of a shared machine moves them alike. Beside events/s,
// the CPU time one exchange costs (the host's process and every process of the plugin's group, from
// schedstat) hardly depends on what else runs.
//
// Usage: node tools/scripts/ts-run.mjs e2e/runtime/bench/isolation.ts [--rounds=5] [--events=2000] [--starts=2]
// (--starts: starts per mode and round)
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostPaths, type StdioPluginRecord } from '@host/host-core';
import { ConsoleProvider } from '@host/host-console';
import { Dispatcher } from '@host/host-dispatch';
import {
  DEFAULT_ISOLATION,
  FilePluginLogStore,
  probeIsolation,
  StdioPluginRuntime,
  strongestMode,
  type IsolationMode,
  type IsolationSupport,
} from '@host/host-runtime';
import { parseStdioManifest } from '@host/protocol';
import { FIXTURE_DIR, fixtureManifest } from '../src/harness';
import { cpuSecondsOf, load, median } from './sdk-peer';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const ROUNDS = Number(args['rounds'] ?? 5);
const EVENTS = Number(args['events'] ?? 2000);
const STARTS = Number(args['starts'] ?? 2);
const CONCURRENCY = [1, 32];
const PLUGIN_ID = 'com.example.bench';

type System = 'none' | IsolationMode;

interface BenchHost {
  start(): Promise<number>;
  stop(): Promise<void>;
  call(): Promise<void>;
  /** CPU seconds the plugin's processes (its process group: bubblewrap and the plugin) used so far. */
  pluginCpu(): number;
  summary: string;
  failures: () => number;
  close(): Promise<void>;
}

async function benchHost(mode: System, support: IsolationSupport): Promise<BenchHost> {
  const dataDir = mkdtempSync(join(tmpdir(), `host-isolation-bench-${mode}-`));
  // A plugin of its own uid searches its way to its package (see the isolation e2e test).
  chmodSync(dataDir, 0o711);
  const paths = hostPaths(dataDir);
  const provider = new ConsoleProvider();
  let runtime: StdioPluginRuntime | null = null;
  const dispatcher = new Dispatcher({ endpoints: () => runtime?.endpoints() ?? [] });
  dispatcher.providers.register(provider);
  const dir = paths.packageDir(PLUGIN_ID);
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(FIXTURE_DIR, 'plugin.mjs'), join(dir, 'plugin.mjs'));
  const manifest = fixtureManifest(PLUGIN_ID, {
    manifest: { concurrency: { maxConcurrentEvents: 32, queueCapacity: 64, overflowPolicy: 'reject' } },
  });
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  const parsed = parseStdioManifest(manifest);
  if (!parsed.ok) throw new Error(`fixture manifest invalid: ${JSON.stringify(parsed.issues)}`);
  const now = new Date().toISOString();
  const record: StdioPluginRecord = {
    pluginId: PLUGIN_ID,
    transport: 'stdio-jsonrpc',
    manifest: parsed.value,
    installedAt: now,
    updatedAt: now,
    enabled: true,
    packageSha256: '0'.repeat(64),
  };
  const logs = new FilePluginLogStore(paths, { flushDelayMilliseconds: 5 });
  runtime = new StdioPluginRuntime({
    paths,
    records: { get: async (id) => (id === PLUGIN_ID ? record : undefined) },
    logs,
    sink: dispatcher.sink,
    timings: { pingIntervalMilliseconds: 15_000 },
    ...(mode === 'none' ? {} : { isolation: { support, settings: { ...DEFAULT_ISOLATION, request: mode } } }),
  });
  const rt = runtime;
  let failures = 0;
  return {
    async start() {
      const t0 = performance.now();
      const status = await rt.start(PLUGIN_ID);
      const took = performance.now() - t0;
      if (status.state !== 'running') throw new Error(`${mode}: the plugin did not start: ${JSON.stringify(status)}`);
      return took;
    },
    async stop() {
      await rt.stop(PLUGIN_ID);
    },
    async call() {
      const routed = await dispatcher.dispatch(
        provider.createEvent({ conversation: { type: 'group', id: 'g1' }, sender: { id: 'u1' }, text: '/echo <b>hi</b>' }),
      );
      const done = routed.completedAt === null ? (await dispatcher.whenCompleted(routed.eventId))! : routed;
      const d = done.deliveries[0];
      if (d?.state !== 'completed' || d.completion?.error || done.outbound.length !== 1 || done.outbound[0]!.error) failures++;
    },
    pluginCpu() {
      return groupCpuSeconds(rt.status(PLUGIN_ID)?.pid);
    },
    get summary() {
      return rt.status(PLUGIN_ID)?.isolation?.summary ?? 'no isolation';
    },
    failures: () => failures,
    async close() {
      await rt.dispose();
      await logs.flush();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The CPU seconds of every process of the group led by `pgid` (Linux). */
function groupCpuSeconds(pgid: number | undefined): number {
  if (pgid === undefined) return NaN;
  let total = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === pgid) total += cpuSecondsOf(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** One mode at one concurrency in one round. */
interface Sample {
  eps: number;
  p99: number;
  /** CPU µs per exchange: the host's process, the plugin's processes. */
  hostCpu: number;
  pluginCpu: number;
}

async function main(): Promise<void> {
  const support = probeIsolation(DEFAULT_ISOLATION);
  const strongest = strongestMode(support);
  const systems: System[] = [
    'none',
    'same-user',
    ...(strongest !== 'same-user' ? (['own-user'] as const) : []),
    ...(strongest === 'sandbox' ? (['sandbox'] as const) : []),
  ];
  const hosts = new Map<System, BenchHost>();
  for (const s of systems) hosts.set(s, await benchHost(s, support));
  const starts = new Map<System, number[]>(systems.map((s) => [s, []]));
  const samples = new Map<string, Sample[]>();
  // Warm-up: the first start of each (package sealing, folders given to the uid) and JIT.
  for (const h of hosts.values()) {
    await h.start();
    await load(8, 500, () => h.call());
  }
  const summaries = systems.map((s) => `  ${s}: ${hosts.get(s)!.summary}`);
  for (let round = 0; round < ROUNDS; round++) {
    const order = systems.map((_, i) => systems[(i + round) % systems.length]!);
    for (const c of CONCURRENCY) {
      for (const s of order) {
        const h = hosts.get(s)!;
        const events = c === 1 ? EVENTS : EVENTS * 5;
        const host0 = process.cpuUsage();
        const plugin0 = h.pluginCpu();
        const r = await load(c, events, () => h.call());
        const host1 = process.cpuUsage(host0);
        const sample: Sample = {
          eps: r.eps,
          p99: r.p99,
          hostCpu: (host1.user + host1.system) / events,
          pluginCpu: ((h.pluginCpu() - plugin0) * 1e6) / events,
        };
        (samples.get(`${s}/${c}`) ?? samples.set(`${s}/${c}`, []).get(`${s}/${c}`)!).push(sample);
      }
    }
    for (let i = 0; i < STARTS; i++) {
      for (const s of order) {
        const h = hosts.get(s)!;
        await h.stop();
        starts.get(s)!.push(await h.start());
      }
    }
    process.stdout.write(`round ${round + 1}/${ROUNDS} done\n`);
  }
  const failures = systems.map((s) => `${s} ${hosts.get(s)!.failures()}`).join(', ');
  for (const h of hosts.values()) await h.close();

  const of = (s: System, c: number) => samples.get(`${s}/${c}`)!;
  const med = (s: System, c: number, k: keyof Sample) => median(of(s, c).map((x) => x[k]));
  /** The median over rounds of this round's value of s divided by same-user's. */
  const ratio = (s: System, c: number, value: (x: Sample) => number) =>
    median(of(s, c).map((x, round) => value(x) / value(of('same-user', c)[round]!)));
  const startRatio = (s: System) => median(starts.get(s)!.map((t, i) => t / starts.get('same-user')![i]!));
  const cpu = (x: Sample) => x.hostCpu + x.pluginCpu;
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const lines = [
    `plugin isolation benchmark: ${ROUNDS} rounds (${EVENTS} events at c=1, ${EVENTS * 5} at c=32 per round), ${starts.get('none')!.length} starts per mode; medians, and medians of each round's ratio to same-user`,
    'modes:',
    ...summaries,
    '',
    '| mode | start ms | start / same-user | c | events/s | events/s / same-user | p99 ms | CPU µs/exchange (host + plugin) | CPU / same-user |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const s of systems) {
    for (const c of CONCURRENCY) {
      lines.push(
        `| ${s} | ${median(starts.get(s)!).toFixed(0)} | ${pct(startRatio(s))} | ${c} | ${med(s, c, 'eps').toFixed(0)} | ${pct(ratio(s, c, (x) => x.eps))} | ${med(s, c, 'p99').toFixed(2)} | ${median(of(s, c).map(cpu)).toFixed(0)} (${med(s, c, 'hostCpu').toFixed(0)} + ${med(s, c, 'pluginCpu').toFixed(0)}) | ${pct(ratio(s, c, cpu))} |`,
      );
    }
  }
  lines.push('');
  for (const c of CONCURRENCY) {
    lines.push(
      `c=${c}: same-user / none: events/s ${pct(1 / ratio('none', c, (x) => x.eps))}, CPU per exchange ${pct(1 / ratio('none', c, cpu))}`,
    );
  }
  lines.push(`exchanges not completed, with an error, or without exactly one rendered reply: ${failures}`);
  console.log(lines.join('\n'));
  process.exit(0);
}

void main();
