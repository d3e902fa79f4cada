// Benchmark of the console path on each store, measured in the same run. Not a test: it reports
// numbers and ratios (target: the embedded SQL store at least 90% of the file store's events/s).
//
//   file        HOST_STORE=file: registry.json, the event log written behind to events.jsonl.
//   sql         HOST_STORE=sql, embedded (PGlite in the data directory): the event log written behind in batches.
//   postgres    HOST_STORE=sql on a PostgreSQL server this benchmark starts (initdb into a temporary
//               directory, loopback): cluster mode (docs/operator/cluster.md), this host holding the plugin's
//               lease, so each event is written to the durable queue and delivered here. Left out with --no-postgres.
//   replica     a second host on the same database: it does not run the plugin, so each event goes through
//               the queue to the "postgres" host (notification, claim, delivery, outcome and reply recorded)
//               and back. postgres and replica against sql give cluster mode's added latency per event.
//
// One exchange is POST /api/console/messages "/echo <b>hi</b>" over loopback HTTP (keep-alive) to the composed
// host, which routes it to the bare stdio fixture plugin (e2e/test-fixtures/misbehaving-plugin: ACK, reply,
// events.completed) and answers when the delivery completed, with the rendered reply. The systems take turns
// round by round, so a busy moment of the shared machine hits them alike; the table shows medians.
//
// Start and memory, file against sql (embedded), each in a process of its own so its RSS is its own, taking
// turns: the first start of a new data directory (the stores opened and migrated, the host composed), a later
// start on it, the process's RSS after that start and after 3000 events at c=8 with the plugin installed.
//
// Usage: node tools/scripts/ts-run.mjs apps/host/bench/store-bench.ts [--rounds=5] [--events=1000] [--no-postgres]
//        [--start-rounds=3] [--no-load] [--cluster]
//
// --cluster: only the console path of sql, postgres and replica (no start bench, no file store): cluster mode's
// added latency against the single host. It also counts, outside the timed rounds, the SQL statements the two
// replicas send per event on each path (every statement of the pool and its transactions, by its first words).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Agent, request } from 'undici';
import pg from 'pg';
import { hostPaths } from '@host/host-core';
import { buildZip } from '@host/host-installer/testing';
import { startTestPostgres, type TestPostgres } from '@host/host-store/testing';
import { composeHost, type Host } from '../src/compose';
import { createHostServer } from '../src/http-server';

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => [a.replace(/^--/, '').split('=')[0]!, a.split('=').slice(1).join('=') || 'true']),
);
const ROUNDS = Number(args['rounds'] ?? 5);
const EVENTS = Number(args['events'] ?? 1000);
const CONCURRENCY = [1, 32];
const TOKEN = 'store-bench-token-0123456789abcdef0123456';

function workspaceRoot(): string {
  for (let dir = process.cwd(); ; dir = resolve(dir, '..')) {
    if (existsSync(join(dir, 'e2e/test-fixtures/misbehaving-plugin/manifest.json'))) return dir;
    if (resolve(dir, '..') === dir) throw new Error('run from inside the workspace');
  }
}

function fixturePackage(root: string): Buffer {
  const dir = join(root, 'e2e/test-fixtures/misbehaving-plugin');
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  manifest.pluginId = 'com.example.echo';
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest) },
    { name: 'plugin.mjs', data: readFileSync(join(dir, 'plugin.mjs')) },
  ]);
}

interface System {
  name: string;
  host: Host;
  url: string;
  dataDir: string;
  close(): Promise<void>;
}

const agent = new Agent({ connections: 64, keepAliveTimeout: 30_000 });

/** The parts of an admin API answer the benchmark reads. */
interface Answer {
  completed?: boolean;
  outbound?: { error: unknown }[];
  [key: string]: unknown;
}

async function post(url: string, path: string, body: unknown, contentType = 'application/json'): Promise<{ status: number; json: Answer }> {
  const r = await request(url + path, {
    method: 'POST',
    dispatcher: agent,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': contentType },
    body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
  });
  return { status: r.statusCode, json: (await r.body.json()) as Answer };
}

async function start(
  name: string,
  root: string,
  store: string,
  database?: { url: string; hostKeyFile: string },
  install = true,
  dataDir = mkdtempSync(join(tmpdir(), `store-bench-${name}-`)),
): Promise<System & { keep(): Promise<void>; install(): Promise<void> }> {
  const host = await composeHost({
    paths: hostPaths(dataDir),
    store,
    storeOptions: database ? { databaseUrl: database.url, hostKeyFile: database.hostKeyFile, replica: name } : { replica: name },
    adminToken: TOKEN,
    version: '0.0.0-bench',
    log: () => undefined,
    httpHealthCheckMilliseconds: 0,
  });
  await host.startEnabledPlugins();
  const server = createHostServer(host.app).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Installed through the admin API as an operator would: multipart upload, started at once.
  const boundary = '----store-bench';
  const zip = fixturePackage(root);
  const multipart = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="startAfterInstall"\r\n\r\ntrue\r\n`),
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="package"; filename="echo.zip"\r\nContent-Type: application/zip\r\n\r\n`,
    ),
    zip,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  if (install) await installFixture(name, url, multipart);
  /** Stops the host, leaving its data directory. */
  const keep = async () => {
    server.close();
    server.closeAllConnections();
    await host.close();
  };
  return {
    install: () => installFixture(name, url, multipart),
    name,
    host,
    url,
    dataDir,
    async close() {
      await keep();
      rmSync(dataDir, { recursive: true, force: true });
    },
    keep,
  };
}

async function installFixture(name: string, url: string, multipart: Buffer): Promise<void> {
  const installed = await post(url, '/api/plugins/packages', multipart, `multipart/form-data; boundary=----store-bench`);
  if (installed.status !== 201) throw new Error(`${name}: install failed: ${JSON.stringify(installed.json)}`);
}

interface Result {
  eps: number;
  p50: number;
  p99: number;
  /** CPU time of this process (all its threads: the host, the embedded database's worker, the load) per event, ms. */
  cpuMs: number;
  failures: number;
}

async function load(system: System, concurrency: number, total: number): Promise<Result> {
  const latencies = new Float64Array(total);
  let next = 0;
  let failures = 0;
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const t0 = performance.now();
        const r = await post(system.url, '/api/console/messages', {
          conversation: { type: 'group', id: 'g1' },
          sender: { id: 'u1', displayName: 'Ann' },
          text: '/echo <b>hi</b>',
        });
        latencies[i] = performance.now() - t0;
        if (r.status !== 200 || r.json.completed !== true || r.json.outbound?.length !== 1 || r.json.outbound[0]!.error) failures++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  latencies.sort();
  return {
    eps: total / elapsed,
    p50: latencies[Math.floor(total * 0.5)]!,
    p99: latencies[Math.floor(total * 0.99)]!,
    cpuMs: (cpu.user + cpu.system) / 1000 / total,
    failures,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface StartResult {
  firstMs: number;
  laterMs: number;
  rssStartMB: number;
  rssLoadedMB: number;
  stateMB: number;
  /** Events/s and CPU ms per event (this process, all threads) at c=1 and c=32. */
  eps1: number;
  eps32: number;
  cpu1: number;
  cpu32: number;
  failures: number;
}

function bytesUnder(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? bytesUnder(p) : statSync(p).size;
  }
  return n;
}

/** In a process of its own (--child=<store>): starts, measures, prints one JSON line. */
async function childRun(store: string): Promise<void> {
  const root = workspaceRoot();
  let t0 = performance.now();
  const first = await start(store, root, store, undefined, false);
  const firstMs = performance.now() - t0;
  await first.keep();
  t0 = performance.now();
  const later = await start(store, root, store, undefined, false, first.dataDir);
  const laterMs = performance.now() - t0;
  const rssStartMB = process.memoryUsage().rss / 1e6;
  await later.install();
  await load(later, 8, 300);
  const c1 = await load(later, 1, 1500);
  const c32 = await load(later, 32, 3000);
  const rssLoadedMB = process.memoryUsage().rss / 1e6;
  await later.keep();
  const stateMB = bytesUnder(join(first.dataDir, 'state')) / 1e6;
  rmSync(first.dataDir, { recursive: true, force: true });
  await agent.close();
  const result: StartResult = {
    firstMs,
    laterMs,
    rssStartMB,
    rssLoadedMB,
    stateMB,
    eps1: c1.eps,
    eps32: c32.eps,
    cpu1: c1.cpuMs,
    cpu32: c32.cpuMs,
    failures: c1.failures + c32.failures,
  };
  console.log(JSON.stringify(result));
}

/** Start and memory per store, each run in a process of its own, the stores taking turns. */
function startBench(rounds: number): string[] {
  const runs = new Map<string, StartResult[]>();
  for (let round = 0; round < rounds; round++) {
    for (const store of round % 2 ? ['sql', 'file'] : ['file', 'sql']) {
      const r = spawnSync(process.execPath, [join(workspaceRoot(), 'tools/scripts/ts-run.mjs'), process.argv[1]!, `--child=${store}`], {
        encoding: 'utf8',
      });
      const line = r.stdout.trim().split('\n').pop() ?? '';
      if (r.status !== 0 || !line.startsWith('{')) throw new Error(`start bench (${store}) failed:\n${r.stdout}\n${r.stderr}`);
      runs.set(store, [...(runs.get(store) ?? []), JSON.parse(line) as StartResult]);
    }
  }
  const med = (store: string, k: keyof StartResult) => median(runs.get(store)!.map((r) => r[k]));
  return [
    `Start and memory per store, each in a process of its own: medians of ${rounds} rounds`,
    '',
    '| store | first start ms | later start ms | RSS after start MB | RSS after 4800 events MB | state/ on disk MB | events/s c=1 | c=32 | CPU ms/event c=1 | c=32 |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...['file', 'sql'].map(
      (s) =>
        `| ${s} | ${med(s, 'firstMs').toFixed(0)} | ${med(s, 'laterMs').toFixed(0)} | ${med(s, 'rssStartMB').toFixed(0)} | ${med(s, 'rssLoadedMB').toFixed(0)} | ${med(s, 'stateMB').toFixed(1)}` +
        ` | ${med(s, 'eps1').toFixed(0)} | ${med(s, 'eps32').toFixed(0)} | ${med(s, 'cpu1').toFixed(3)} | ${med(s, 'cpu32').toFixed(3)} |`,
    ),
    '',
    `sql/file in processes of their own: events/s c=1 ${((100 * med('sql', 'eps1')) / med('file', 'eps1')).toFixed(1)}%, c=32 ${((100 * med('sql', 'eps32')) / med('file', 'eps32')).toFixed(1)}%;` +
      ` CPU per event c=1 ${((100 * med('sql', 'cpu1')) / med('file', 'cpu1')).toFixed(1)}%, c=32 ${((100 * med('sql', 'cpu32')) / med('file', 'cpu32')).toFixed(1)}%;` +
      ` failed exchanges ${[...runs.values()].flat().reduce((n, r) => n + r.failures, 0)}`,
    '',
  ];
}

/** Cluster mode's added latency against the single host (sql), for the systems that ran. */
function clusterLines(med: (name: string, c: number, k: keyof Result) => number, systems: System[]): string[] {
  return systems
    .filter((s) => s.name === 'postgres' || s.name === 'replica')
    .map(
      (s) =>
        `cluster mode (${s.name === 'postgres' ? 'event taken by the replica running the plugin' : 'event taken by another replica'}) vs single host (sql): ` +
        CONCURRENCY.map(
          (c) =>
            `c=${c} p50 ${med(s.name, c, 'p50').toFixed(3)} vs ${med('sql', c, 'p50').toFixed(3)} ms (+${(med(s.name, c, 'p50') - med('sql', c, 'p50')).toFixed(3)} ms, x${(med(s.name, c, 'p50') / med('sql', c, 'p50')).toFixed(2)}),` +
            ` p99 ${med(s.name, c, 'p99').toFixed(3)} vs ${med('sql', c, 'p99').toFixed(3)} ms (+${(med(s.name, c, 'p99') - med('sql', c, 'p99')).toFixed(3)} ms, x${(med(s.name, c, 'p99') / med('sql', c, 'p99')).toFixed(2)})`,
        ).join('; '),
    );
}

/**
 * The SQL statements both replicas send per event on each cluster path, counted in the client (every query
 * of the pg module: pool, transactions, listening connections), outside the timed rounds. A statement is
 * named by its first words; BEGIN and COMMIT count as statements (each is a round trip).
 */
async function countStatements(systems: System[]): Promise<string[]> {
  const proto = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const original = proto.query;
  const counts = new Map<string, number>();
  proto.query = function (this: unknown, ...a: unknown[]) {
    const text = typeof a[0] === 'string' ? a[0] : ((a[0] as { text?: string } | null)?.text ?? '?');
    const name = text.replace(/\s+/g, ' ').trim().slice(0, 60);
    counts.set(name, (counts.get(name) ?? 0) + 1);
    return original.apply(this, a);
  };
  const lines: string[] = [];
  try {
    for (const s of systems) {
      for (const c of CONCURRENCY) {
        counts.clear();
        const n = 300;
        await load(s, c, n);
        const total = [...counts.values()].reduce((a, b) => a + b, 0);
        lines.push(
          `SQL statements per event, ${s.name} at c=${c}: ${(total / n).toFixed(2)} (` +
            [...counts]
              .sort((a, b) => b[1] - a[1])
              .map(([k, v]) => `${(v / n).toFixed(2)} × ${k}`)
              .join('; ') +
            ')',
        );
      }
    }
  } finally {
    proto.query = original;
  }
  return lines;
}

async function main(): Promise<void> {
  if (args['child'] !== undefined) return childRun(args['child']);
  const clusterOnly = args['cluster'] !== undefined;
  const startLines = clusterOnly ? [] : startBench(Number(args['start-rounds'] ?? 3));
  if (args['no-load'] !== undefined) {
    console.log(startLines.join('\n'));
    return;
  }
  const root = workspaceRoot();
  let pg: TestPostgres | undefined;
  let keyDir: string | undefined;
  const systems: System[] = [];
  try {
    if (!clusterOnly) systems.push(await start('file', root, 'file'));
    const t0 = performance.now();
    systems.push(await start('sql', root, 'sql'));
    const embeddedStart = performance.now() - t0;
    if (args['no-postgres'] === undefined) {
      pg = await startTestPostgres();
      // Both replicas seal with one host key, as docs/operator/cluster.md sets them up.
      keyDir = mkdtempSync(join(tmpdir(), 'store-bench-key-'));
      writeFileSync(join(keyDir, 'host.key'), '6b'.repeat(32) + '\n', { mode: 0o600 });
      const database = { url: await pg.createDatabase('bench'), hostKeyFile: join(keyDir, 'host.key') };
      systems.push(await start('postgres', root, 'sql', database));
      // Joins after the install: the package comes from the package store; the plugin stays where its lease is.
      systems.push(await start('replica', root, 'sql', database, false));
    }
    // Warm-up: JIT, connections, the plugin's first events.
    for (const s of systems) await load(s, 8, 200);
    const counted = clusterOnly ? await countStatements(systems.filter((s) => s.name !== 'sql')) : [];
    const results = new Map<string, Result[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of CONCURRENCY) {
        for (const s of round % 2 ? [...systems].reverse() : systems) {
          const r = await load(s, c, c === 1 ? EVENTS : EVENTS * 3);
          const key = `${s.name}|${c}`;
          results.set(key, [...(results.get(key) ?? []), r]);
        }
      }
    }
    const med = (name: string, c: number, k: keyof Result) => median(results.get(`${name}|${c}`)!.map((r) => r[k]));
    const fails = (name: string) =>
      [...results].filter(([k]) => k.startsWith(`${name}|`)).reduce((n, [, rs]) => n + rs.reduce((m, r) => m + r.failures, 0), 0);
    if (clusterOnly) {
      console.log(
        [
          `Console path, cluster mode against the single host: medians of ${ROUNDS} rounds (${EVENTS} events at c=1, ${EVENTS * 3} at c=32), node ${process.version}`,
          '',
          '| system | c | events/s | p50 ms | p99 ms |',
          '|---|---|---|---|---|',
          ...systems.flatMap((s) =>
            CONCURRENCY.map(
              (c) =>
                `| ${s.name} | ${c} | ${med(s.name, c, 'eps').toFixed(0)} | ${med(s.name, c, 'p50').toFixed(3)} | ${med(s.name, c, 'p99').toFixed(3)} |`,
            ),
          ),
          '',
          ...clusterLines(med, systems),
          ...counted,
          `exchanges that failed: ${JSON.stringify(Object.fromEntries(systems.map((s) => [s.name, fails(s.name)])))}`,
        ].join('\n'),
      );
      return;
    }
    const lines = [
      ...startLines,
      `Console path per store: medians of ${ROUNDS} rounds (${EVENTS} events at c=1, ${EVENTS * 3} at c=32), node ${process.version}`,
      '',
      '| store | c | events/s | p50 ms | p99 ms | host CPU ms/event |',
      '|---|---|---|---|---|---|',
      ...systems.flatMap((s) =>
        CONCURRENCY.map(
          (c) =>
            `| ${s.name} | ${c} | ${med(s.name, c, 'eps').toFixed(0)} | ${med(s.name, c, 'p50').toFixed(3)} | ${med(s.name, c, 'p99').toFixed(3)} | ${med(s.name, c, 'cpuMs').toFixed(3)} |`,
        ),
      ),
      '',
      ...systems
        .filter((s) => s.name !== 'file')
        .map(
          (s) =>
            `${s.name}/file events/s: c=1 ${((100 * med(s.name, 1, 'eps')) / med('file', 1, 'eps')).toFixed(1)}%, c=32 ${((100 * med(s.name, 32, 'eps')) / med('file', 32, 'eps')).toFixed(1)}%` +
            `; p50 added at c=1 ${(med(s.name, 1, 'p50') - med('file', 1, 'p50')).toFixed(3)} ms, p99 added at c=1 ${(med(s.name, 1, 'p99') - med('file', 1, 'p99')).toFixed(3)} ms`,
        ),
      ...systems
        .filter((s) => s.name !== 'file')
        .map(
          (s) =>
            `${s.name}/file host CPU per event: c=1 ${((100 * med(s.name, 1, 'cpuMs')) / med('file', 1, 'cpuMs')).toFixed(1)}%, c=32 ${((100 * med(s.name, 32, 'cpuMs')) / med('file', 32, 'cpuMs')).toFixed(1)}%`,
        ),
      ...clusterLines(med, systems),
      `target: sql/file events/s at least 90% at both concurrencies`,
      `embedded database start with install (first start of a data directory): ${embeddedStart.toFixed(0)} ms; RSS now ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB`,
      `exchanges that failed: ${JSON.stringify(Object.fromEntries(systems.map((s) => [s.name, fails(s.name)])))}`,
    ];
    console.log(lines.join('\n'));
  } finally {
    for (const s of systems) await s.close().catch(() => undefined);
    await pg?.stop();
    if (keyDir) rmSync(keyDir, { recursive: true, force: true });
    await agent.close();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
