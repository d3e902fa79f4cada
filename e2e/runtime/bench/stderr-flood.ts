// Benchmark of a plugin flooding stderr beside a plugin that answers the console. Not a test: it measures, prints
// the numbers and the ratios taken in the same run, and says whether the target was met.
//
//   baseline  POST /api/console/messages "/echo" at --rate per second (default 100) over HTTP for --seconds
//             (default 10) to the fixture plugin in echo mode, nothing else running
//   flood     the same, while the fixture in flood-stderr --flood-line-by-line mode writes short stderr lines
//             one write each, as fast as it can (it gets no events: only the echo plugin's latency is measured)
//
// It reports the echo's p50 and p99 in both, their ratios (target: at most 1.25), the host's and the flooder's
// CPU time per second of each phase (the flooder's from /proc: a Node.js flooder whose stderr is left unread
// does not block, it queues its writes and runs on), the machine's load average, and how many of the
// flooder's lines the host logged and dropped.
//
// Rounds of both phases alternate (--rounds, default 3); the ratios are the median of the rounds' ratios.
//
// Usage: node tools/scripts/ts-run.mjs e2e/runtime/bench/stderr-flood.ts [--seconds=10] [--rate=100] [--rounds=3]
import { readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestHost, type TestHost } from '../src/harness';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const SECONDS = Number(args['seconds'] ?? 10);
const RATE = Number(args['rate'] ?? 100);
const ROUNDS = Number(args['rounds'] ?? 3);
const TARGET_RATIO = 1.25;

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

interface Phase {
  p50: number;
  p99: number;
  answered: number;
  failed: number;
  cpuPerSecond: number;
  /** The flooder's CPU time per second of the phase (0 in the baseline). */
  flooderCpuPerSecond: number;
  /** The machine's 1-minute load average at the end of the phase. */
  load: number;
}

/** Processes whose command line holds `word` (Linux), to read the flooder's own CPU time. */
function pidsWith(word: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(word)) out.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

/** CPU seconds (user and system) the processes have used so far; 100 clock ticks a second on Linux. */
function cpuSecondsOf(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited
    }
  }
  return ticks / 100;
}

/** Sends "/echo" at RATE per second for SECONDS (open loop: a slow answer does not delay the next request). */
async function measure(port: number, agent: Agent, flooderPids: number[] = []): Promise<Phase> {
  const times: number[] = [];
  let failed = 0;
  const cpu = process.cpuUsage();
  const flooderCpu = cpuSecondsOf(flooderPids);
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < SECONDS * RATE; i++) {
    const due = started + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(
      post(port, agent, `/echo ping ${i}`).then(
        (ms) => void times.push(ms),
        () => void failed++,
      ),
    );
  }
  await Promise.all(pending);
  const used = process.cpuUsage(cpu);
  const wall = (performance.now() - started) / 1000;
  return {
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    answered: times.length,
    failed,
    cpuPerSecond: (used.user + used.system) / 1e6 / wall,
    flooderCpuPerSecond: (cpuSecondsOf(flooderPids) - flooderCpu) / wall,
    load: Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]),
  };
}

function post(port: number, agent: Agent, text: string): Promise<number> {
  const body = JSON.stringify({ conversation: { type: 'c2c', id: 'u1' }, sender: { id: 'u1' }, text });
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/api/console/messages', method: 'POST', agent, headers: { 'content-type': 'application/json' } },
      (res) => {
        let answer = '';
        res.on('data', (c: Buffer) => (answer += c.toString()));
        res.on('end', () => {
          const parsed = JSON.parse(answer) as { outbound?: unknown[] };
          if (res.statusCode === 200 && parsed.outbound?.length === 1) resolve(performance.now() - t0);
          else reject(new Error(`${res.statusCode} ${answer.slice(0, 200)}`));
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function main(): Promise<void> {
  const host: TestHost = createTestHost({ pingIntervalMilliseconds: 15_000 });
  const server = host.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as AddressInfo).port;
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  try {
    const echo = host.install({ pluginId: 'com.example.echo', manifest: { permissions: ['messages.reply'] } });
    await host.runtime.start(echo);
    for (let i = 0; i < 50; i++) await post(port, agent, '/echo warm-up');
    const flooder = host.install({
      pluginId: 'com.example.flooder',
      args: ['flood-stderr', '--flood-line-by-line'],
      manifest: { commands: [], eventSubscriptions: [{ eventType: 'message.created', conversationIds: ['elsewhere'] }] },
    });
    let logged = 0;
    let dropped = 0;
    host.logs.subscribe((pluginId, line) => {
      if (pluginId !== flooder) return;
      if (line.stream === 'stderr') logged++;
      const m = /^(\d+) log lines? dropped: the plugin logs faster than/.exec(line.message);
      if (m) dropped += Number(m[1]);
    });
    // Rounds alternate, so a change in the machine's other load shows as spread between rounds, not as a ratio.
    const rounds: { baseline: Phase; flood: Phase }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const baseline = await measure(port, agent);
      await host.runtime.start(flooder);
      // Past the first burst, into the steady flood.
      await new Promise((r) => setTimeout(r, 2_000));
      const flood = await measure(port, agent, pidsWith('flood-stderr'));
      await host.runtime.stop(flooder);
      rounds.push({ baseline, flood });
    }

    console.log(`\n${RATE} requests/s for ${SECONDS} s per phase, ${ROUNDS} rounds\n`);
    console.log('| round | phase | answered | failed | p50 ms | p99 ms | host CPU s/s | flooder CPU s/s | load |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    rounds.forEach((r, i) => {
      for (const [name, p] of [
        ['baseline', r.baseline],
        ['flood', r.flood],
      ] as const)
        console.log(
          `| ${i + 1} | ${name} | ${p.answered} | ${p.failed} | ${p.p50.toFixed(2)} | ${p.p99.toFixed(2)} | ${p.cpuPerSecond.toFixed(3)} | ${p.flooderCpuPerSecond.toFixed(3)} | ${p.load.toFixed(1)} |`,
        );
    });
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const r50 = median(rounds.map((r) => r.flood.p50 / r.baseline.p50));
    const r99 = median(rounds.map((r) => r.flood.p99 / r.baseline.p99));
    console.log(
      `\nflood/baseline, median of the rounds' ratios: p50 ${(r50 * 100).toFixed(0)}%, p99 ${(r99 * 100).toFixed(0)}% (target: at most ${TARGET_RATIO * 100}%)`,
    );
    const cpu = median(rounds.map((r) => r.flood.cpuPerSecond / r.baseline.cpuPerSecond));
    console.log(`host CPU time per second, flood/baseline: ${(cpu * 100).toFixed(0)}%`);
    console.log(`flooder lines the host logged: ${logged}, dropped unread: ${dropped} (in about ${ROUNDS * (SECONDS + 2)} s of flood)`);
    console.log(r50 <= TARGET_RATIO && r99 <= TARGET_RATIO ? 'target met' : 'target NOT met');
  } finally {
    agent.destroy();
    server.close();
    await host.close();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
