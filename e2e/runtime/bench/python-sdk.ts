// Benchmark of the Python SDK's full stdio exchange beside a minimal hand-written
// stdlib Python child, measured in the same run. Not a test: it reports numbers
// and the ratio (target: the SDK at least 70% of the baseline's events/s at 32
// events in flight).
//
//   sdk        python3 plugin.py --host-stdio with host_sdk_v2 (sync handler: a
//              worker thread per event) that ACKs, replies, and reports
//              events.completed after the reply was answered: 6 messages.
//   sdk-async  the same with an async handler (runs on the event loop).
//   raw        python-raw-child.py: the same 6 messages, single-threaded, no
//              validation, no rendering.
//
// The parent is one minimal Content-Length peer for all three (it plays the
// host: answers replies and completions); an exchange ends when the parent has
// the events.completed request.
//
// Usage: node tools/scripts/ts-run.mjs e2e/runtime/bench/python-sdk.ts [--rounds=3] [--events=3000]
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const ROUNDS = Number(args['rounds'] ?? 3);
const EVENTS = Number(args['events'] ?? 3000);
const CONCURRENCY = [1, 32];

function root(): string {
  for (let dir = process.cwd(); ; dir = resolve(dir, '..')) {
    if (existsSync(join(dir, 'libs/plugin-sdk-python/host_sdk_v2'))) return dir;
    if (resolve(dir, '..') === dir) throw new Error('run from inside the workspace');
  }
}
const ROOT = root();
const BENCH = join(ROOT, 'e2e/runtime/bench');

interface Result {
  eps: number;
  p50: number;
  p99: number;
}

function event(eventId: string): unknown {
  return {
    eventId,
    eventType: 'message.created',
    timestamp: '2026-01-01T00:00:00.000Z',
    source: 'console',
    bot: { botAccountId: 'console-bot', platform: 'console' },
    conversation: { type: 'group', conversationId: 'g1' },
    sender: { provider: 'console', mentionId: 'u1', displayName: 'u1' },
    message: { id: `m-${eventId}`, content: '/echo <b>hi</b>', attachments: [], mentions: [] },
    messageReference: { messageId: `m-${eventId}`, targetType: 'group', targetId: 'g1', restrictions: [] },
    command: { name: 'echo', word: 'echo', prefix: '/', args: '<b>hi</b>' },
  };
}

function peer(command: string, argv: string[], cwd: string) {
  const child: ChildProcess = spawn(command, argv, {
    cwd,
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, PYTHONPATH: join(ROOT, 'libs/plugin-sdk-python'), PYTHONDONTWRITEBYTECODE: '1' },
  });
  let buf: Buffer = Buffer.alloc(0);
  let nextId = 1;
  let failures = 0;
  const completions = new Map<string, () => void>();
  const responses = new Map<number, (m: any) => void>();
  const write = (m: unknown) => {
    const body = Buffer.from(JSON.stringify(m));
    child.stdin!.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]));
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    for (;;) {
      const h = buf.indexOf('\r\n\r\n');
      if (h < 0) return;
      const len = Number(/Content-Length: (\d+)/i.exec(buf.subarray(0, h).toString())![1]);
      if (buf.length < h + 4 + len) return;
      const msg = JSON.parse(buf.subarray(h + 4, h + 4 + len).toString());
      buf = buf.subarray(h + 4 + len);
      if (msg.method === 'messages.reply') {
        write({ jsonrpc: '2.0', id: msg.id, result: { accepted: true, messageId: 'out-1', target: { type: 'group', id: 'g1' } } });
      } else if (msg.method === 'events.completed') {
        write({ jsonrpc: '2.0', id: msg.id, result: { recorded: true } });
        if (msg.params.error) failures++;
        completions.get(msg.params.eventId)?.();
      } else if (msg.method === 'log.write') {
        write({ jsonrpc: '2.0', id: msg.id, result: { accepted: true } });
      } else if (msg.method === undefined) {
        if (msg.error) failures++;
        responses.get(msg.id)?.(msg);
      }
    }
  });
  const request = (method: string, params: unknown) =>
    new Promise<any>((r) => {
      const id = nextId++;
      responses.set(id, (m) => {
        responses.delete(id);
        r(m);
      });
      write({ jsonrpc: '2.0', id, method, params });
    });
  return {
    async initialize(): Promise<void> {
      const answer = await request('host.initialize', {
        supportedProtocolVersions: [2],
        instanceId: 'bench',
        pluginId: 'com.example.bench',
        hostVersion: 'bench',
        directories: { pluginDirectory: cwd, pluginDataDirectory: cwd, pluginConfigDirectory: cwd, pluginCacheDirectory: cwd },
        token: 'b'.repeat(40),
        encoding: 'json',
        runtime: { maxConcurrentEvents: 32, queueCapacity: 64 },
        settings: {},
      });
      if (answer.error) throw new Error(`handshake failed: ${JSON.stringify(answer.error)}`);
    },
    call: () =>
      new Promise<void>((r) => {
        const id = nextId++;
        const eventId = `e${id}`;
        completions.set(eventId, () => {
          completions.delete(eventId);
          r();
        });
        write({ jsonrpc: '2.0', id, method: 'events.message', params: event(eventId) });
      }),
    failures: () => failures,
    /** CPU seconds (user + system) the child used so far, from /proc (Linux). */
    cpuSeconds(): number {
      try {
        const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        return (Number(fields[11]) + Number(fields[12])) / 100;
      } catch {
        return NaN;
      }
    },
    close: () =>
      new Promise<void>((r) => {
        if (child.exitCode !== null) return r();
        child.once('exit', () => r());
        child.stdin!.end();
        setTimeout(() => child.kill('SIGKILL'), 3000).unref();
      }),
  };
}

async function load(concurrency: number, total: number, once: () => Promise<unknown>): Promise<Result> {
  const latencies = new Float64Array(total);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const t0 = performance.now();
        await once();
        latencies[i] = performance.now() - t0;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort();
  return { eps: total / elapsed, p50: latencies[Math.floor(total * 0.5)]!, p99: latencies[Math.floor(total * 0.99)]! };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const python = process.env['BENCH_PYTHON'] ?? 'python3';
  const systems = {
    sdk: peer(python, ['plugin.py', '--host-stdio'], join(BENCH, 'python-sdk-child')),
    'sdk-async': peer(python, ['plugin.py', '--host-stdio', '--async'], join(BENCH, 'python-sdk-child')),
    raw: peer(python, [join(BENCH, 'python-raw-child.py')], BENCH),
  };
  for (const s of Object.values(systems)) await s.initialize();
  for (const s of Object.values(systems)) await load(8, 500, s.call); // warm-up
  const results: Record<string, Record<number, Result[]>> = {};
  // CPU time of each child per exchange: unlike events/s it hardly depends on what else runs on the machine.
  const cpu: Record<string, Record<number, number[]>> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of CONCURRENCY) {
      for (const [name, s] of Object.entries(systems)) {
        const before = s.cpuSeconds();
        ((results[name] ??= {})[c] ??= []).push(await load(c, EVENTS, s.call));
        ((cpu[name] ??= {})[c] ??= []).push(((s.cpuSeconds() - before) * 1e6) / EVENTS);
      }
    }
    process.stdout.write(`round ${round + 1}/${ROUNDS} done\n`);
  }
  const failures = Object.fromEntries(Object.entries(systems).map(([n, s]) => [n, s.failures()]));
  for (const s of Object.values(systems)) await s.close();
  const med = (name: string, c: number, k: keyof Result) => median(results[name]![c]!.map((r) => r[k]));
  const lines = [
    `Python SDK stdio exchange: medians of ${ROUNDS} rounds of ${EVENTS} events (6 messages each), ${python}`,
    '',
    '| system | c | events/s | p50 ms | p99 ms | child CPU µs/exchange |',
    '|---|---|---|---|---|---|',
  ];
  const cpuOf = (name: string, c: number) => median(cpu[name]![c]!);
  for (const name of Object.keys(systems)) {
    for (const c of CONCURRENCY) {
      lines.push(
        `| ${name} | ${c} | ${med(name, c, 'eps').toFixed(0)} | ${med(name, c, 'p50').toFixed(3)} | ${med(name, c, 'p99').toFixed(3)} | ${cpuOf(name, c).toFixed(0)} |`,
      );
    }
  }
  const ratio = (name: string, c: number) => ((100 * med(name, c, 'eps')) / med('raw', c, 'eps')).toFixed(1);
  lines.push(
    '',
    `sdk/raw events/s: c=1 ${ratio('sdk', 1)}%, c=32 ${ratio('sdk', 32)}% (target at c=32: at least 70%)`,
    `sdk-async/raw events/s: c=1 ${ratio('sdk-async', 1)}%, c=32 ${ratio('sdk-async', 32)}%`,
    `raw/sdk child CPU per exchange: sdk c=32 ${((100 * cpuOf('raw', 32)) / cpuOf('sdk', 32)).toFixed(1)}%, sdk-async c=32 ${((100 * cpuOf('raw', 32)) / cpuOf('sdk-async', 32)).toFixed(1)}%`,
    `exchanges with an error: ${JSON.stringify(failures)}`,
  );
  console.log(lines.join('\n'));
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
