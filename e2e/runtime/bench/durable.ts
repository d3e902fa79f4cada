// Benchmark (not a test): what keeping accepted events durable costs on the
// console path of one host. The built host, the echo fixture, console messages
// answered once the reply is in:
// - "in memory": HOST_STORE=file, where an accepted event lives in memory until
//   it is logged (the only path before the inbox; a crash loses what waits);
// - "durable": the default SQL store (embedded), where an event is kept in the
//   inbox before it is taken and each delivery to a stdio plugin goes through
//   the durable queue, with its replies recorded before they are sent.
// 1 and 32 messages in flight, 3 rounds each (median shown); the ratio and the
// added latency per event are taken in the same run.
//
//   npx nx run e2e-runtime:bench-durable
//   npx nx run e2e-runtime:bench-durable --args="--profile=<folder> --in-flight=1"
//     also writes a CPU profile of each host (main thread and the embedded
//     database's thread, `--cpu-prof`) into <folder>/<store>/, to open in
//     Chrome's DevTools or any .cpuprofile viewer.
import { api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';
import { buildZip } from '@host/host-installer/testing';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { threadCpuSecondsOf } from './sdk-peer';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const FIXTURE = join(HERE, '../../test-fixtures/misbehaving-plugin');
const PLUGIN_ID = 'com.example.durable-bench';
const ROUNDS = 3;
const EVENTS: Record<number, number> = { 1: 300, 32: 2000 };
const PROFILE = process.argv.find((a) => a.startsWith('--profile='))?.slice('--profile='.length);
/** `--in-flight=1` or `--in-flight=32`: only that one (a profile of one load). */
const IN_FLIGHT = [1, 32].filter(
  (n) => !process.argv.some((a) => a.startsWith('--in-flight=')) || process.argv.includes(`--in-flight=${n}`),
);
const STORES = { file: 'in memory (HOST_STORE=file)', sql: 'durable (embedded SQL store)' } as const;

interface Round {
  eventsPerSecond: number;
  p50: number;
  p99: number;
  /** The host's CPU time per event (all its threads), in ms: unlike throughput, it does not depend on what else the machine runs. */
  cpu: number;
  /** The part of `cpu` spent off the main thread (the embedded database's thread, V8's and libuv's helpers). */
  cpuOffMain: number;
  failed: number;
}

function echoPackage(): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  manifest['pluginId'] = PLUGIN_ID;
  manifest['permissions'] = ['messages.reply'];
  delete manifest['concurrency'];
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest) },
    { name: 'plugin.mjs', data: readFileSync(join(FIXTURE, 'plugin.mjs')) },
  ]);
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

async function round(host: RunningHost, inFlight: number, events: number): Promise<Round> {
  const latencies: number[] = [];
  let failed = 0;
  let next = 0;
  const cpu0 = threadCpuSecondsOf(host.child.pid!);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < events) {
        const i = next++;
        const s = performance.now();
        const res = await api(host, 'POST', '/api/console/messages', {
          conversation: { type: 'group', id: 'g-bench' },
          sender: { id: `u${i % 13}` },
          text: `/echo bench ${i}`,
        });
        latencies.push(performance.now() - s);
        if (res.status !== 200 || res.body.outbound?.length !== 1) failed++;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = threadCpuSecondsOf(host.child.pid!);
  latencies.sort((a, b) => a - b);
  const cpu = ((cpu1.all - cpu0.all) * 1000) / events;
  const cpuOffMain = cpu - ((cpu1.main - cpu0.main) * 1000) / events;
  return { eventsPerSecond: events / seconds, p50: pct(latencies, 0.5), p99: pct(latencies, 0.99), cpu, cpuOffMain, failed };
}

const medianOf = (rounds: Round[], key: keyof Round) =>
  [...rounds.map((r) => r[key])].sort((a, b) => a - b)[Math.floor(rounds.length / 2)]!;

async function measure(store: keyof typeof STORES): Promise<Record<number, Round>> {
  const dataDir = mkdtempSync(join(tmpdir(), `host-bench-durable-${store}-`));
  const nodeArgs = PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${join(PROFILE, store)}`] : [];
  const host = await startHost(dataDir, { HOST_STORE: store }, [], { nodeArgs });
  try {
    const installed = await api(host, 'POST', '/api/plugins/packages', packageForm(echoPackage(), { startAfterInstall: 'true' }));
    if (installed.status !== 201) throw new Error(`install failed: ${JSON.stringify(installed.body)}`);
    await round(host, 4, 100); // warm-up
    const out: Record<number, Round> = {};
    for (const inFlight of IN_FLIGHT) {
      const rounds: Round[] = [];
      for (let r = 0; r < ROUNDS; r++) rounds.push(await round(host, inFlight, EVENTS[inFlight]!));
      out[inFlight] = {
        eventsPerSecond: medianOf(rounds, 'eventsPerSecond'),
        p50: medianOf(rounds, 'p50'),
        p99: medianOf(rounds, 'p99'),
        cpu: medianOf(rounds, 'cpu'),
        cpuOffMain: medianOf(rounds, 'cpuOffMain'),
        failed: rounds.reduce((n, r) => n + r.failed, 0),
      };
    }
    return out;
  } finally {
    await host.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(`${dataDir}.admin-token`, { force: true });
  }
}

async function main(): Promise<void> {
  buildHost();
  const results = { file: await measure('file'), sql: await measure('sql') };
  const lines: string[] = [];
  for (const inFlight of IN_FLIGHT) {
    const a = results.file[inFlight]!;
    const b = results.sql[inFlight]!;
    for (const store of ['file', 'sql'] as const) {
      const r = results[store][inFlight]!;
      lines.push(
        `c=${String(inFlight).padStart(2)}  ${STORES[store].padEnd(30)} ${r.eventsPerSecond.toFixed(0).padStart(6)} ev/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  host CPU ${r.cpu.toFixed(2)} ms/event (${r.cpuOffMain.toFixed(2)} off the main thread)  failed ${r.failed}`,
      );
    }
    lines.push(
      `c=${String(inFlight).padStart(2)}  durable / in memory: ${((b.eventsPerSecond / a.eventsPerSecond) * 100).toFixed(1)}% of the throughput (target at least 90%); p50 ${b.p50 - a.p50 >= 0 ? '+' : ''}${(b.p50 - a.p50).toFixed(2)} ms per event; host CPU ${((b.cpu / a.cpu) * 100).toFixed(0)}%`,
    );
  }
  console.log(lines.join('\n'));
  const failed = IN_FLIGHT.reduce((n, c) => n + results.file[c]!.failed + results.sql[c]!.failed, 0);
  if (failed > 0) process.exitCode = 1;
}

void main();
