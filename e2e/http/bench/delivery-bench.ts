// Benchmark (not a test): host-to-HTTP-plugin delivery through
// HttpPluginEndpoint against a raw baseline in the same run.
//
//   npx nx run e2e-http:bench      (or: node tools/scripts/ts-run.mjs e2e/http/bench/delivery-bench.ts)
//
// Both sides POST the same event body to the same plugin process
// (bench-server.mjs) over keep-alive undici pools of the same size:
// - raw:  Pool.request + read the body, nothing else;
// - host: HttpPluginEndpoint.deliver: serialise, sign, POST with deadline and
//   size cap, validate the response with MessageResponseSchema, circuit
//   breaker and health bookkeeping, outbound message handed to a sink.
// Each (mode, concurrency) runs 5 rounds, alternating which mode goes first;
// the table shows the median of the rounds and the host/raw ratio.
// Target: host throughput at concurrency 32 at least 50% of raw.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import type { OutboundSink } from '@host/host-core';
import { HttpPluginEndpoint, generateSigningSecret } from '@host/host-http';
import { HttpManifestSchema, MessageEventSchema } from '@host/protocol';

const ROUNDS = 5;
const REQUESTS: Record<number, number> = { 1: 4000, 32: 30000 };
const WARMUP = 3000;
const CONNECTIONS = 32;

interface RoundResult {
  eventsPerSecond: number;
  p50: number;
  p99: number;
}

async function startServer(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('bench-server.mjs', import.meta.url))], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  return { child, url: (JSON.parse(line) as { listening: string }).listening };
}

async function load(concurrency: number, total: number, once: () => Promise<void>): Promise<RoundResult> {
  const latencies = new Float64Array(total);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t = performance.now();
        await once();
        latencies[i] = performance.now() - t;
      }
    }),
  );
  const elapsed = performance.now() - started;
  latencies.sort();
  return {
    eventsPerSecond: (total / elapsed) * 1000,
    p50: latencies[Math.floor(total * 0.5)]!,
    p99: latencies[Math.floor(total * 0.99)]!,
  };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  const server = await startServer();
  const origin = new URL(server.url).origin;
  const event = MessageEventSchema.parse({
    eventId: 'evt-bench',
    eventType: 'message.created',
    timestamp: '2026-01-01T00:00:00Z',
    source: 'console',
    bot: { botAccountId: 'bot-1', platform: 'console', displayName: 'Bench bot' },
    conversation: { type: 'group', conversationId: 'group-1', groupOpenId: 'group-1' },
    sender: { provider: 'console', mentionId: 'user-1', displayName: 'Ada' },
    message: { id: 'msg-1', content: '/echo hello from the benchmark', attachments: [], mentions: [] },
    messageReference: { messageId: 'msg-1', targetType: 'group', targetId: 'group-1', restrictions: [] },
    command: { name: 'echo', word: 'echo', prefix: '/', args: 'hello from the benchmark' },
  });
  const body = JSON.stringify(event);

  const raw = new Pool(origin, { connections: CONNECTIONS, pipelining: 1 });
  const rawOnce = async () => {
    const res = await raw.request({
      method: 'POST',
      path: '/host/plugin/events/message',
      headers: { 'content-type': 'application/json' },
      body,
    });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`raw: status ${res.statusCode}`);
  };

  const endpoint = new HttpPluginEndpoint(
    {
      transport: 'http',
      pluginId: 'com.example.bench',
      manifest: HttpManifestSchema.parse({
        pluginId: 'com.example.bench',
        name: 'Bench',
        version: '1.0.0',
        author: 'Bench',
        protocolVersion: 2,
        capabilities: 9,
      }),
      baseUrl: server.url,
      signingSecret: generateSigningSecret(),
      installedAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
      enabled: true,
    },
    { concurrency: { maxConcurrentEvents: CONNECTIONS } },
  );
  let replies = 0;
  const sink: OutboundSink = {
    send: async (r) => {
      replies++;
      return { accepted: true, target: r.target ?? { type: 'group', id: 'group-1' } };
    },
  };
  const hostOnce = async () => {
    const outcome = await endpoint.deliver(event, sink).decision;
    if (outcome.error) throw new Error(`host: ${outcome.error.code}: ${outcome.error.message}`);
  };

  try {
    await load(32, WARMUP, rawOnce);
    await load(32, WARMUP, hostOnce);
    const results: Record<string, { raw: RoundResult[]; host: RoundResult[] }> = {};
    for (const concurrency of [1, 32]) {
      const r = (results[concurrency] = { raw: [] as RoundResult[], host: [] as RoundResult[] });
      for (let round = 0; round < ROUNDS; round++) {
        const order: ('raw' | 'host')[] = round % 2 === 0 ? ['raw', 'host'] : ['host', 'raw'];
        for (const mode of order) r[mode].push(await load(concurrency, REQUESTS[concurrency]!, mode === 'raw' ? rawOnce : hostOnce));
      }
    }
    await endpoint.idle();

    const rows: string[] = [];
    const summary: Record<string, unknown> = {};
    for (const [concurrency, r] of Object.entries(results)) {
      const m = (mode: 'raw' | 'host') => ({
        eventsPerSecond: median(r[mode].map((x) => x.eventsPerSecond)),
        p50: median(r[mode].map((x) => x.p50)),
        p99: median(r[mode].map((x) => x.p99)),
      });
      const rawM = m('raw');
      const hostM = m('host');
      const ratio = hostM.eventsPerSecond / rawM.eventsPerSecond;
      summary[`concurrency${concurrency}`] = { raw: rawM, host: hostM, ratio };
      for (const [name, x] of [
        ['raw undici pool', rawM],
        ['HttpPluginEndpoint', hostM],
      ] as const) {
        rows.push(`| ${concurrency} | ${name} | ${x.eventsPerSecond.toFixed(0)} | ${x.p50.toFixed(3)} | ${x.p99.toFixed(3)} |`);
      }
      rows.push(`| ${concurrency} | ratio host/raw | ${(ratio * 100).toFixed(1)}% | | |`);
    }
    console.log(
      `HTTP delivery benchmark: medians of ${ROUNDS} rounds, ${REQUESTS[1]} events per round at concurrency 1, ${REQUESTS[32]} at 32; node ${process.version}`,
    );
    console.log('| concurrency | client | events/s | p50 ms | p99 ms |');
    console.log('|---|---|---|---|---|');
    for (const row of rows) console.log(row);
    const ratio32 = (summary['concurrency32'] as { ratio: number }).ratio;
    console.log(`target: host >= 50% of raw at concurrency 32: ${ratio32 >= 0.5 ? 'met' : 'NOT met'} (${(ratio32 * 100).toFixed(1)}%)`);
    console.log(`replies handed to the sink: ${replies}`);
    console.log(JSON.stringify(summary));
  } finally {
    await endpoint.close();
    await raw.destroy();
    server.child.kill('SIGTERM');
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
