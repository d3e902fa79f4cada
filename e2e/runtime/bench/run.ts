// Benchmark of the full stdio exchange through the host, beside two references
// measured in the same run. Not a test: it reports numbers and ratios.
//
//   host  an event injected into the dispatcher, delivered over stdio to the
//         fixture plugin (echo), which ACKs (the decision), calls messages.reply
//         (validated, rendered to the QQ Bot body by the console provider), then
//         reports events.completed: 6 messages, 3 requests and their answers.
//         One exchange ends when the host has recorded the completion.
//   raw   a minimal Content-Length parent and child doing the same 6-message
//         exchange with no validation (the ceiling for a stdio exchange here).
//   mcp   the MCP TypeScript SDK's stdio tool call (2 messages per call).
//
// Usage: node --expose-gc tools/scripts/ts-run.mjs e2e/runtime/bench/run.ts [--rounds=5] [--events=N]
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConsoleProvider } from '@host/host-console';
import { createTestHost } from '../src/harness';
import { load, type Result } from './sdk-peer';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const ROUNDS = Number(args['rounds'] ?? 5);
const EVENTS: Record<number, number> = { 1: Number(args['events'] ?? 3000), 32: Number(args['events'] ?? 3000) * 5 };
const CONCURRENCY = [1, 32];
const benchDir = findBenchDir();

function findBenchDir(): string {
  for (let dir = process.cwd(); ; dir = resolve(dir, '..')) {
    const candidate = join(dir, 'e2e/runtime/bench');
    if (existsSync(join(candidate, 'raw-child.mjs'))) return candidate;
    if (resolve(dir, '..') === dir) throw new Error('run from inside the workspace');
  }
}

// ---- raw baseline parent ----
/** The event the host sends for "/echo <b>hi</b>", so raw moves the same bytes. */
const provider = new ConsoleProvider();
function rawEvent(eventId: string): unknown {
  const event = provider.createEvent({ conversation: { type: 'group', id: 'g1' }, sender: { id: 'u1' }, text: '/echo <b>hi</b>' });
  return { ...event, eventId, command: { name: 'echo', word: 'echo', prefix: '/', args: '<b>hi</b>' } };
}

function rawParent(): { call: () => Promise<void>; close: () => Promise<void> } {
  const child = spawn(process.execPath, [join(benchDir, 'raw-child.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
  let buf: Buffer = Buffer.alloc(0);
  let nextId = 1;
  const completions = new Map<string, () => void>();
  const write = (m: unknown) => {
    const body = Buffer.from(JSON.stringify(m));
    child.stdin!.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]));
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    for (;;) {
      const h = buf.indexOf('\r\n\r\n');
      if (h < 0) return;
      const len = Number(/Content-Length: (\d+)/.exec(buf.subarray(0, h).toString())![1]);
      if (buf.length < h + 4 + len) return;
      const msg = JSON.parse(buf.subarray(h + 4, h + 4 + len).toString());
      buf = buf.subarray(h + 4 + len);
      if (msg.method === 'messages.reply')
        write({ jsonrpc: '2.0', id: msg.id, result: { accepted: true, messageId: 'console-out-1', target: { type: 'group', id: 'g1' } } });
      else if (msg.method === 'events.completed') {
        write({ jsonrpc: '2.0', id: msg.id, result: { recorded: true } });
        completions.get(msg.params.eventId)?.();
      }
      // The ACK (a response) needs no answer; the exchange ends with the completion, as on the host.
    }
  });
  return {
    call: () =>
      new Promise<void>((r) => {
        const id = nextId++;
        const eventId = `e${id}`;
        completions.set(eventId, () => {
          completions.delete(eventId);
          r();
        });
        write({ jsonrpc: '2.0', id, method: 'events.message', params: rawEvent(eventId) });
      }),
    close: () => stopChild(child),
  };
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((r) => {
    if (child.exitCode !== null) return r();
    child.once('exit', () => r());
    child.stdin?.end();
    setTimeout(() => child.kill('SIGKILL'), 2000).unref();
  });
}

// ---- MCP reference ----
async function mcpClient(): Promise<{ call: () => Promise<unknown>; close: () => Promise<void> } | null> {
  try {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const transport = new StdioClientTransport({ command: process.execPath, args: [join(benchDir, 'mcp-server.mjs')], stderr: 'inherit' });
    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(transport);
    return { call: () => client.callTool({ name: 'echo', arguments: { text: 'hi' } }), close: () => client.close() };
  } catch (e) {
    console.log(`MCP reference unavailable: ${(e as Error).message}`);
    return null;
  }
}

// ---- host ----
async function hostSetup() {
  const host = createTestHost({ pingIntervalMilliseconds: 15_000 });
  const id = host.install({ manifest: { concurrency: { maxConcurrentEvents: 32, queueCapacity: 64, overflowPolicy: 'reject' } } });
  await host.runtime.start(id);
  let failures = 0;
  const call = async () => {
    const routed = await host.dispatcher.dispatch(
      host.provider.createEvent({ conversation: { type: 'group', id: 'g1' }, sender: { id: 'u1' }, text: '/echo <b>hi</b>' }),
    );
    const record = routed.completedAt === null ? (await host.dispatcher.whenCompleted(routed.eventId))! : routed;
    const d = record.deliveries[0];
    if (d?.state !== 'completed' || d.completion?.error || record.outbound.length !== 1 || record.outbound[0]!.error) failures++;
  };
  return { call, close: () => host.close(), failures: () => failures };
}

async function memoryPerIdlePlugin(count: number): Promise<{ heapPerPlugin: number; rssPerPlugin: number }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  const host = createTestHost({ pingIntervalMilliseconds: 15_000 });
  const ids = Array.from({ length: count }, (_, i) => host.install({ pluginId: `com.example.idle${i}` }));
  // One plugin first, so module loading and JIT warm-up are not counted.
  await host.runtime.start(ids[0]!);
  const measure = () => {
    gc?.();
    gc?.();
    const m = process.memoryUsage();
    return { heap: m.heapUsed + m.external + m.arrayBuffers, rss: m.rss };
  };
  const before = measure();
  for (const id of ids.slice(1)) await host.runtime.start(id);
  await new Promise((r) => setTimeout(r, 500));
  const after = measure();
  await host.close();
  return { heapPerPlugin: (after.heap - before.heap) / (count - 1), rssPerPlugin: (after.rss - before.rss) / (count - 1) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  if (!(globalThis as { gc?: unknown }).gc) console.log('(run node with --expose-gc for exact memory figures)');
  const only = args['only'];
  const systems = {
    host: await hostSetup(),
    raw: only && only !== 'raw' ? null : rawParent(),
    mcp: only && only !== 'mcp' ? null : await mcpClient(),
  };
  const results: Record<string, Record<number, Result[]>> = { host: { 1: [], 32: [] }, raw: { 1: [], 32: [] }, mcp: { 1: [], 32: [] } };
  // Warm-up: JIT and buffers of every path.
  for (const s of Object.values(systems)) if (s) await load(8, 2000, s.call);
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of CONCURRENCY) {
      for (const [name, s] of Object.entries(systems)) {
        if (!s) continue;
        results[name]![c]!.push(await load(c, EVENTS[c]!, s.call));
      }
    }
    process.stdout.write(`round ${round + 1}/${ROUNDS} done\n`);
  }
  const failures = systems.host.failures();
  for (const s of Object.values(systems)) await s?.close();
  const memory = await memoryPerIdlePlugin(11);

  const med = (name: string, c: number, k: keyof Result) => median(results[name]![c]!.map((r) => r[k]));
  const lines = [
    `stdio exchange benchmark: medians of ${ROUNDS} rounds, ${EVENTS[1]} events at c=1 and ${EVENTS[32]} at c=32 per round`,
    '',
    '| system | messages/event | c | events/s | messages/s | p50 ms | p99 ms |',
    '|---|---|---|---|---|---|---|',
  ];
  const perEvent: Record<string, number> = { host: 6, raw: 6, mcp: 2 };
  for (const name of Object.keys(results)) {
    if (!systems[name as keyof typeof systems]) continue;
    for (const c of CONCURRENCY) {
      const eps = med(name, c, 'eps');
      lines.push(
        `| ${name} | ${perEvent[name]} | ${c} | ${eps.toFixed(0)} | ${(eps * perEvent[name]!).toFixed(0)} | ${med(name, c, 'p50').toFixed(3)} | ${med(name, c, 'p99').toFixed(3)} |`,
      );
    }
  }
  lines.push('');
  for (const c of only ? [] : CONCURRENCY) {
    const ratio = med('host', c, 'eps') / med('raw', c, 'eps');
    lines.push(
      `c=${c}: host/raw events/s = ${(ratio * 100).toFixed(1)}%` +
        (systems.mcp
          ? `, host/mcp messages/s = ${(((med('host', c, 'eps') * perEvent['host']!) / (med('mcp', c, 'eps') * perEvent['mcp']!)) * 100).toFixed(1)}%`
          : ', mcp: not measured'),
    );
  }
  lines.push(`host p99 at c=1: ${med('host', 1, 'p99').toFixed(3)} ms`);
  lines.push(
    `host memory per idle running plugin: ${(memory.heapPerPlugin / 1024).toFixed(0)} KiB (JS heap + buffers), ${(memory.rssPerPlugin / 1024).toFixed(0)} KiB RSS`,
  );
  lines.push(`host exchanges not completed, with an error, or without exactly one rendered reply: ${failures}`);
  console.log(lines.join('\n'));
  process.exit(0);
}

void main();
