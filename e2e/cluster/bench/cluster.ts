// Benchmark (not a test): what running as a cluster costs on the console path, against a host alone, measured in
// one run on one throwaway PostgreSQL server. The built host, the echo fixture (a stdio plugin), console messages
// answered once the plugin's reply is in:
// - "embedded": one host on the embedded database (the default store);
// - "PostgreSQL, alone": one host on the PostgreSQL server (a cluster of one: it takes every lease);
// - "cluster of 2": two replicas on another database of the same server; the plugin runs on the first (its lease),
//   and the messages go to both in turn, so half reach the plugin through the other replica and the queue.
// 1 and 16 messages in flight; the configurations take turns round by round (so a change in the machine's load
// hits all of them), and each figure is the median of the rounds. Ratios are taken against the host alone.
//
//   npx nx run e2e-cluster:bench
//   npx nx run e2e-cluster:bench --args=--profile=<folder>
//     also writes a CPU profile (`--cpu-prof`) of each replica of the cluster into <folder>/<replica>/;
//     `node tools/scripts/cpuprofile-top.mjs <folder>/<replica>` lists where its time went.
//   --rounds=<n> (default 5)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestPostgres } from '@host/host-store/testing';
import { api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';
import { fixturePackage } from '../src/replica-set';

const PLUGIN_ID = 'com.example.cluster-bench';
const ROUNDS = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice('--rounds='.length) ?? 5);
const EVENTS: Record<number, number> = { 1: 300, 16: 1600 };
const IN_FLIGHT = [1, 16] as const;
const PROFILE = process.argv.find((a) => a.startsWith('--profile='))?.slice('--profile='.length);

interface Round {
  eventsPerSecond: number;
  p50: number;
  p99: number;
  failed: number;
}

interface Setup {
  name: string;
  /** The replicas messages go to, in turn. */
  hosts: RunningHost[];
  stop(): Promise<void>;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function round(setup: Setup, inFlight: number, events: number): Promise<Round> {
  const latencies: number[] = [];
  let failed = 0;
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < events) {
        const i = next++;
        const host = setup.hosts[i % setup.hosts.length]!;
        const s = performance.now();
        const res = await api(host, 'POST', '/api/console/messages', {
          conversation: { type: 'group', id: 'g-bench' },
          sender: { id: `u${i % 13}` },
          text: `/echo-md bench ${i}`,
        });
        latencies.push(performance.now() - s);
        if (res.status !== 200 || res.body.outbound?.length !== 1) failed++;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return { eventsPerSecond: events / seconds, p50: pct(latencies, 0.5), p99: pct(latencies, 0.99), failed };
}

/** Starts `names.length` replicas (one: a host alone) with `env`, the plugin installed and started through the first. */
async function start(name: string, names: string[], env: Record<string, string>, profile: boolean): Promise<Setup> {
  const dirs = names.map((n) => mkdtempSync(join(tmpdir(), `host-bench-cluster-${n}-`)));
  const hosts: RunningHost[] = [];
  const stop = async () => {
    // SIGTERM: a host stopping gracefully writes its CPU profile.
    for (const h of hosts) await h.stop('SIGTERM');
    for (const d of dirs) {
      rmSync(d, { recursive: true, force: true });
      rmSync(`${d}.admin-token`, { force: true });
    }
  };
  try {
    for (const [i, n] of names.entries()) {
      const nodeArgs = profile && PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${join(PROFILE, n)}`] : [];
      hosts.push(await startHost(dirs[i]!, names.length > 1 ? { ...env, HOST_REPLICA_NAME: n } : env, [], { nodeArgs }));
    }
    const installed = await api(
      hosts[0]!,
      'POST',
      '/api/plugins/packages',
      packageForm(fixturePackage(PLUGIN_ID), { startAfterInstall: 'true' }),
    );
    if (installed.status !== 201) throw new Error(`install failed: ${JSON.stringify(installed.body)}`);
    // Every replica routes to the plugin before the clock starts.
    for (const h of hosts)
      for (let tries = 0; ; tries++) {
        const r = await api(h, 'POST', '/api/console/messages', {
          conversation: { type: 'group', id: 'g-bench' },
          sender: { id: 'u0' },
          text: '/echo-md ready',
        });
        if (r.status === 200 && r.body.outbound?.length === 1) break;
        if (tries > 300) throw new Error(`${name}: ${PLUGIN_ID} never answered through a replica`);
        await new Promise((ok) => setTimeout(ok, 100));
      }
    const setup = { name, hosts, stop };
    await round(setup, 4, 200); // warm-up
    return setup;
  } catch (e) {
    await stop().catch(() => undefined);
    throw e;
  }
}

async function main(): Promise<void> {
  buildHost();
  const pg = await startTestPostgres();
  const work = mkdtempSync(join(tmpdir(), 'host-bench-cluster-'));
  const keyFile = join(work, 'host.key');
  writeFileSync(keyFile, '2e'.repeat(32) + '\n', { mode: 0o600 });
  const setups: Setup[] = [];
  try {
    setups.push(await start('embedded', ['embedded'], {}, false));
    const alone = await pg.createDatabase('alone');
    setups.push(await start('PostgreSQL, alone', ['alone'], { HOST_DATABASE_URL: alone, HOST_KEY_FILE: keyFile }, false));
    const shared = await pg.createDatabase('cluster');
    setups.push(await start('cluster of 2', ['replica-1', 'replica-2'], { HOST_DATABASE_URL: shared, HOST_KEY_FILE: keyFile }, true));

    const results = new Map<string, Round[]>();
    for (const inFlight of IN_FLIGHT)
      for (let r = 0; r < ROUNDS; r++)
        for (const setup of r % 2 ? [...setups].reverse() : setups) {
          const key = `${setup.name} ${inFlight}`;
          results.set(key, [...(results.get(key) ?? []), await round(setup, inFlight, EVENTS[inFlight]!)]);
        }

    const of = (name: string, inFlight: number): Round => {
      const rounds = results.get(`${name} ${inFlight}`)!;
      return {
        eventsPerSecond: median(rounds.map((r) => r.eventsPerSecond)),
        p50: median(rounds.map((r) => r.p50)),
        p99: median(rounds.map((r) => r.p99)),
        failed: rounds.reduce((n, r) => n + r.failed, 0),
      };
    };
    const lines = [
      `medians of ${ROUNDS} rounds (${EVENTS[1]} events at c=1, ${EVENTS[16]} at c=16), one echo plugin, taking turns`,
      '| setup | c | events/s | p50 ms | p99 ms | failed |',
      '|---|---|---|---|---|---|',
    ];
    for (const inFlight of IN_FLIGHT)
      for (const s of setups) {
        const r = of(s.name, inFlight);
        lines.push(
          `| ${s.name} | ${inFlight} | ${r.eventsPerSecond.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.failed} |`,
        );
      }
    lines.push('', '| ratio | c | throughput | p50 | p99 |', '|---|---|---|---|---|');
    const ratio = (a: string, b: string, inFlight: number) => {
      const x = of(a, inFlight);
      const y = of(b, inFlight);
      return `| ${a} / ${b} | ${inFlight} | ${(x.eventsPerSecond / y.eventsPerSecond).toFixed(2)} | ${(x.p50 / y.p50).toFixed(2)} | ${(x.p99 / y.p99).toFixed(2)} |`;
    };
    for (const inFlight of IN_FLIGHT) {
      lines.push(ratio('cluster of 2', 'PostgreSQL, alone', inFlight));
      lines.push(ratio('cluster of 2', 'embedded', inFlight));
      lines.push(ratio('PostgreSQL, alone', 'embedded', inFlight));
    }
    console.log(lines.join('\n'));
    if (IN_FLIGHT.some((c) => setups.some((s) => of(s.name, c).failed > 0))) process.exitCode = 1;
  } finally {
    for (const s of setups) await s.stop().catch(() => undefined);
    await pg.stop();
    rmSync(work, { recursive: true, force: true });
  }
  if (PROFILE)
    console.log(`CPU profiles of the cluster's replicas: ${PROFILE}/<replica>/ (node tools/scripts/cpuprofile-top.mjs <folder>)`);
}

void main();
