// Benchmark (not a test): what the metrics cost on the console path. Two built hosts in the same run, each
// with the echo fixture plugin: one with metrics on (the default: /metrics on the main listener, scraped
// once a second as Prometheus would, at a short interval), one with HOST_METRICS_BIND=off. They take turns
// under the same load: console messages (POST /api/console/messages) answered by the plugin's reply, with
// a fixed number in flight. Many short rounds alternate, so drift and bursts of other work on the machine
// hit both about alike; reported are the ratio of the totals (all events over all seconds of each side)
// and the median and quartiles of the ratios of each pair of rounds. The hosts use the file store by default: the fastest path, where the
// metrics' share of the work is the largest (--store sql for the default store, whose database writes
// bound the rate instead).
//
//   npx nx run e2e-observability:bench   (--rounds N, --events N, --in-flight N, --store file|sql)
import { ADMIN_TOKEN, api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';
import { parseExposition, sampleValue } from '@host/host-metrics/testing';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixturePackage } from '../src/support';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const ROUNDS = arg('rounds', 30);
const EVENTS = arg('events', 150);
const IN_FLIGHT = arg('in-flight', 16);
const PLUGIN = 'com.example.bench-echo';
const storeArg = process.argv.indexOf('--store');
const STORE = storeArg >= 0 ? process.argv[storeArg + 1]! : 'file';

interface Side {
  label: string;
  host: RunningHost;
  dataDir: string;
  scrapes: number;
}

async function start(label: string, env: Record<string, string>): Promise<Side> {
  const dataDir = mkdtempSync(join(tmpdir(), `host-metrics-bench-${label}-`));
  const host = await startHost(dataDir, { HOST_STORE: STORE, ...env });
  const installed = await api(host, 'POST', '/api/plugins/packages', packageForm(fixturePackage(PLUGIN), { startAfterInstall: 'true' }));
  if (installed.status !== 201) throw new Error(`install failed on ${label}: ${JSON.stringify(installed.body)}`);
  return { label, host, dataDir, scrapes: 0 };
}

/** CPU seconds (user and system) the host process has used, from /proc (Linux). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime, fields 14 and 15 of proc(5), in clock ticks (100 a second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * One round: EVENTS console messages, IN_FLIGHT at a time; answers events per second and the host's CPU
 * milliseconds per event (less disturbed by other load on the machine than the rate).
 */
async function round(side: Side, scrapeEveryMs: number | null): Promise<{ rate: number; cpuMs: number }> {
  const cpuBefore = cpuSeconds(side.host.child.pid!);
  let next = 0;
  let failed = 0;
  const scraper =
    scrapeEveryMs === null
      ? undefined
      : setInterval(() => {
          void fetch(`${side.host.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
            .then((r) => r.text())
            .then(() => side.scrapes++);
        }, scrapeEveryMs);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next++ < EVENTS) {
        const r = await api(side.host, 'POST', '/api/console/messages', {
          conversation: { type: 'group', id: 'bench-group' },
          sender: { id: 'bench-user' },
          text: '/echo bench',
        });
        if (r.status !== 200 || r.body.deliveries?.[0]?.state !== 'completed') failed++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  if (scraper) clearInterval(scraper);
  if (failed > 0) throw new Error(`${failed} of ${EVENTS} events were not answered on ${side.label}`);
  return { rate: EVENTS / seconds, cpuMs: ((cpuSeconds(side.host.child.pid!) - cpuBefore) * 1000) / EVENTS };
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * q)]!;
const median = (xs: number[]) => quantile(xs, 0.5);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const percent = (x: number) => `${(100 * x).toFixed(1)}%`;

async function main(): Promise<void> {
  buildHost();
  const on = await start('on', {});
  const off = await start('off', { HOST_METRICS_BIND: 'off' });
  try {
    // Warm both up (JIT, the embedded database's first writes), not counted.
    await round(on, 1000);
    await round(off, null);
    const rates = { on: [] as number[], off: [] as number[] };
    const ratios: number[] = [];
    const cpuRatios: number[] = [];
    const cpu = { on: [] as number[], off: [] as number[] };
    for (let i = 0; i < ROUNDS; i++) {
      // Alternate which goes first, so neither always follows the other's leftovers.
      const first = i % 2 === 0;
      const a = first ? await round(on, 1000) : await round(off, null);
      const b = first ? await round(off, null) : await round(on, 1000);
      const [on1, off1] = first ? [a, b] : [b, a];
      const [rOn, rOff] = [on1.rate, off1.rate];
      rates.on.push(rOn);
      rates.off.push(rOff);
      ratios.push(rOn / rOff);
      cpu.on.push(on1.cpuMs);
      cpu.off.push(off1.cpuMs);
      cpuRatios.push(on1.cpuMs / off1.cpuMs);
      console.log(
        `round ${i + 1}: metrics on ${rOn.toFixed(0)} events/s (${on1.cpuMs.toFixed(2)} ms CPU an event), off ${rOff.toFixed(0)} events/s (${off1.cpuMs.toFixed(2)} ms), on/off ${(100 * (rOn / rOff)).toFixed(1)}%`,
      );
    }
    const exposition = parseExposition(
      await (await fetch(`${on.host.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text(),
    );
    const counted = sampleValue(exposition, 'host_deliveries_total', { plugin_id: PLUGIN, outcome: 'completed' });
    // All events over all seconds of a side: each round has EVENTS events and took EVENTS / rate seconds.
    const totalRate = (rs: number[]) => (EVENTS * rs.length) / sum(rs.map((r) => EVENTS / r));
    console.log(
      `\nconsole path (${STORE} store), ${EVENTS} events a round, ${IN_FLIGHT} in flight, ${ROUNDS} rounds each:\n` +
        `  metrics on (scraped every second, ${on.scrapes} scrapes): ${totalRate(rates.on).toFixed(0)} events/s over all rounds\n` +
        `  metrics off:                                   ${totalRate(rates.off).toFixed(0)} events/s over all rounds\n` +
        `  throughput with metrics on: ${percent(totalRate(rates.on) / totalRate(rates.off))} of off over all rounds; ` +
        `pairs of rounds: median ${percent(median(ratios))}, quartiles ${percent(quantile(ratios, 0.25))} to ${percent(quantile(ratios, 0.75))} (aim: at least 95%)\n` +
        `  host CPU an event: on ${(sum(cpu.on) / ROUNDS).toFixed(2)} ms, off ${(sum(cpu.off) / ROUNDS).toFixed(2)} ms, ` +
        `on/off ${percent(sum(cpu.on) / sum(cpu.off))} (pairs of rounds: median ${percent(median(cpuRatios))})\n` +
        `  deliveries the metrics counted on the "on" host: ${counted} (sent ${EVENTS * (ROUNDS + 1)})`,
    );
  } finally {
    for (const side of [on, off]) {
      await side.host.stop();
      rmSync(side.dataDir, { recursive: true, force: true });
      rmSync(`${side.dataDir}.admin-token`, { force: true });
    }
  }
}

main().catch((e: Error) => {
  console.error(e.message);
  process.exit(1);
});
