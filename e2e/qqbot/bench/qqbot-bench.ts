// Benchmark (not a test): the whole QQ Bot path of the built host against a
// minimal hand-written server doing the same work, in the same run.
//
//   npx nx run e2e-qqbot:bench      (or: node tools/scripts/ts-run.mjs e2e/qqbot/bench/qqbot-bench.ts)
//
// One event = a GROUP_AT_MESSAGE_CREATE webhook with a real Ed25519
// signature, posted by the platform's side (WebhookSigner), until its
// Markdown reply mentioning the sender arrives at the fake platform's
// OpenAPI (FakeQqPlatform). Both servers answer the webhook first and reply
// after, so the time measured is webhook in to reply out.
// - host: the built host (dist/apps/host/main.cjs) with one QQ Bot account and
//   the misbehaving fixture plugin (echo mode) as a running stdio plugin:
//   verification, replay memory, mapping, routing and command matching, the
//   stdio JSON-RPC exchange, the event log, rendering, token cache and the
//   OpenAPI call.
// - minimal: minimal-server.mjs, the same verification and one reply call.
// Concurrency 1 and 32 (events in flight); 5 rounds each, alternating which
// server goes first; the table shows the median round and the host/minimal
// ratio. Target: host at least 50% of minimal at 32 in flight.
import { api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';
import { buildZip } from '@host/host-installer/testing';
import { FakeQqPlatform, WebhookSigner } from '@host/host-qqbot/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const BOT = { appId: '102030405', secret: 'benchSecretForQQBot42' };
/** `--cpu-prof <dir>`: the host writes a V8 CPU profile of the whole run there when it stops (open it in Chrome DevTools). */
const profileArg = process.argv.indexOf('--cpu-prof');
const CPU_PROFILE_DIR = profileArg >= 0 ? process.argv[profileArg + 1] : undefined;
/** `--no-build`: benchmark dist/apps/host as it is (for example a build of another commit, to compare two). */
const BUILD = !process.argv.includes('--no-build');
const ROUNDS = 5;
const EVENTS: Record<number, number> = { 1: 400, 32: 4000 };
const WARMUP = 600;
const EVENT_TIMEOUT_MS = 15_000;
const HERE = fileURLToPath(new URL('.', import.meta.url));
const FIXTURE = join(HERE, '../../test-fixtures/misbehaving-plugin');

interface Round {
  eventsPerSecond: number;
  p50: number;
  p99: number;
  failed: number;
}

/** Replies the fake received, by the msg_id they answer. */
const waiting = new Map<string, () => void>();

function echoPackage(): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  manifest['pluginId'] = 'com.example.qq-bench-echo';
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest) },
    { name: 'plugin.mjs', data: readFileSync(join(FIXTURE, 'plugin.mjs')) },
  ]);
}

async function startMinimal(platform: FakeQqPlatform): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [
      join(HERE, 'minimal-server.mjs'),
      '--app-id',
      BOT.appId,
      '--secret',
      BOT.secret,
      '--api',
      platform.apiBaseUrl,
      '--token-url',
      platform.tokenUrl,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`minimal server exited with ${code}`)));
  });
  return { child, url: (JSON.parse(line) as { listening: string }).listening };
}

/** One event: the signed webhook, then its reply at the platform. */
async function once(signer: WebhookSigner): Promise<boolean> {
  const payload = signer.groupAtMessage({ groupOpenId: 'BENCH_GROUP', memberOpenId: 'BENCH_MEMBER', content: ' /echo bench **reply**' });
  const msgId = (payload['d'] as { id: string }).id;
  let timer: NodeJS.Timeout | undefined;
  const replied = new Promise<boolean>((resolve) => {
    waiting.set(msgId, () => resolve(true));
    timer = setTimeout(() => resolve(false), EVENT_TIMEOUT_MS);
  });
  const answer = await signer.post(payload);
  if (answer.status !== 200) {
    waiting.delete(msgId);
    clearTimeout(timer);
    return false;
  }
  const ok = await replied;
  clearTimeout(timer);
  waiting.delete(msgId);
  return ok;
}

async function load(signer: WebhookSigner, concurrency: number, total: number): Promise<Round> {
  const latencies: number[] = [];
  let failed = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) {
        const t = performance.now();
        if (await once(signer)) latencies.push(performance.now() - t);
        else failed++;
      }
    }),
  );
  const elapsed = performance.now() - started;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { eventsPerSecond: (latencies.length / elapsed) * 1000, p50: at(0.5), p99: at(0.99), failed };
}

/** CPU milliseconds (user + system) a process used so far, from /proc (Linux); 0 elsewhere. */
function cpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

/** The pid of the running benchmark plugin process (Linux), found by its working directory, the package directory. */
function pluginPid(): number | undefined {
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
        if (cmd.includes('plugin.mjs') && readlinkSync(`/proc/${entry}/cwd`).includes('com.example.qq-bench-echo')) return Number(entry);
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    // no /proc
  }
  return undefined;
}

const median = (rounds: Round[]): Round =>
  [...rounds].sort((a, b) => a.eventsPerSecond - b.eventsPerSecond)[Math.floor(rounds.length / 2)]!;

async function main(): Promise<void> {
  if (BUILD) buildHost();
  const platform = await FakeQqPlatform.start({
    ...BOT,
    maxRecorded: 0,
    onMessage: (m) => waiting.get(String(m.body['msg_id']))?.(),
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'host-qqbot-bench-'));
  const accountsFile = `${dataDir}.qqbot.json`;
  writeFileSync(
    accountsFile,
    JSON.stringify({ accounts: [{ id: 'bench', apiBaseUrl: platform.apiBaseUrl, tokenUrl: platform.tokenUrl, ...BOT }] }),
    {
      mode: 0o600,
    },
  );
  let host: RunningHost | undefined;
  let minimal: { child: ChildProcess; url: string } | undefined;
  const signers: WebhookSigner[] = [];
  try {
    host = await startHost(dataDir, {
      HOST_QQBOT_ACCOUNTS_FILE: accountsFile,
      ...(CPU_PROFILE_DIR
        ? { NODE_OPTIONS: `--require ${join(HERE, 'cpu-profile.cjs')}`, HOST_BENCH_CPU_PROFILE_DIR: resolve(CPU_PROFILE_DIR) }
        : {}),
    });
    const installed = await api(host, 'POST', '/api/plugins/packages', packageForm(echoPackage(), { startAfterInstall: 'true' }));
    if (installed.status !== 201) throw new Error(`plugin install failed: ${JSON.stringify(installed.body)}`);
    minimal = await startMinimal(platform);
    const clients = {
      host: new WebhookSigner({ ...BOT, webhookUrl: `${host.url}/api/qqbot/webhook/bench` }),
      minimal: new WebhookSigner({ ...BOT, webhookUrl: minimal.url }),
    };
    signers.push(clients.host, clients.minimal);
    for (const [name, signer] of Object.entries(clients)) {
      const warm = await load(signer, 8, WARMUP);
      if (warm.failed > 0) throw new Error(`${name}: ${warm.failed} of ${WARMUP} warm-up events got no reply`);
    }
    const rows: string[] = [];
    const pids = { host: host.child.pid, plugin: pluginPid(), minimal: minimal.child.pid };
    const cpu: Record<string, number> = { host: 0, plugin: 0, minimal: 0 };
    let events = { host: 0, minimal: 0 };
    for (const concurrency of [1, 32]) {
      const results: Record<'host' | 'minimal', Round[]> = { host: [], minimal: [] };
      for (let r = 0; r < ROUNDS; r++) {
        const order: ('host' | 'minimal')[] = r % 2 === 0 ? ['minimal', 'host'] : ['host', 'minimal'];
        for (const name of order) {
          const before = { host: cpuMs(pids.host), plugin: cpuMs(pids.plugin), minimal: cpuMs(pids.minimal), bench: cpuMs(process.pid) };
          results[name].push(await load(clients[name], concurrency, EVENTS[concurrency]!));
          cpu[`bench-${name}`] = (cpu[`bench-${name}`] ?? 0) + cpuMs(process.pid) - before.bench;
          if (name === 'host') {
            cpu['host']! += cpuMs(pids.host) - before.host;
            cpu['plugin']! += cpuMs(pids.plugin) - before.plugin;
          } else cpu['minimal']! += cpuMs(pids.minimal) - before.minimal;
          events = { ...events, [name]: events[name] + EVENTS[concurrency]! };
        }
      }
      const m = median(results.minimal);
      const h = median(results.host);
      const fmt = (x: number) => x.toFixed(2);
      rows.push(`| ${concurrency} | minimal server | ${Math.round(m.eventsPerSecond)} | ${fmt(m.p50)} | ${fmt(m.p99)} | ${m.failed} |`);
      rows.push(`| ${concurrency} | host | ${Math.round(h.eventsPerSecond)} | ${fmt(h.p50)} | ${fmt(h.p99)} | ${h.failed} |`);
      rows.push(`| ${concurrency} | ratio host/minimal | ${((h.eventsPerSecond / m.eventsPerSecond) * 100).toFixed(1)}% | | | |`);
    }
    console.log(`\nQQ Bot path: signed webhook in -> reply at the platform (median of ${ROUNDS} rounds; latency in ms)\n`);
    console.log('| in flight | server | events/s | p50 | p99 | no reply |');
    console.log('|---|---|---|---|---|---|');
    for (const row of rows) console.log(row);
    console.log('\nTarget: host at least 50% of the minimal server at 32 in flight.');
    if (pids.plugin !== undefined) {
      const per = (ms: number, n: number) => ((ms / n) * 1000).toFixed(0);
      console.log(
        `CPU per event (all rounds): host ${per(cpu['host']!, events.host)} us + plugin ${per(cpu['plugin']!, events.host)} us; minimal server ${per(cpu['minimal']!, events.minimal)} us; ` +
          `this process (signing webhooks, the fake platform) ${per(cpu['bench-host']!, events.host)} us with the host, ${per(cpu['bench-minimal']!, events.minimal)} us with the minimal server`,
      );
    }
  } finally {
    for (const s of signers) await s.close();
    minimal?.child.kill('SIGTERM');
    await host?.stop();
    await platform.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(accountsFile, { force: true });
    rmSync(`${dataDir}.admin-token`, { force: true });
  }
}

main().catch((e: Error) => {
  console.error(e.stack ?? e.message);
  process.exit(1);
});
