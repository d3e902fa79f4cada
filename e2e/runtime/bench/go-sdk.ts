// Benchmark of the Go SDK's full stdio exchange beside the raw Node child of the stdio benchmark
// (raw-child.mjs), measured in the same run, and the cold start of a Go plugin beside a Node one. Not a
// test: it reports numbers and ratios (target: the Go SDK at least equal to the raw Node child's events/s
// at 32 events in flight).
//
//   go-sdk     the go-sdk-child executable (hostsdk, built here with go build -trimpath): ACK, a Markdown
//              reply mentioning the sender, events.completed once the reply was answered: 6 messages.
//   node-raw   raw-child.mjs: the same 6 messages with minimal framing and no validation.
//   cold start spawn to the answer of host.initialize: the Go executable, and node-sdk-child.cjs (the
//              Node SDK's smallest plugin; needs the built SDK).
//
// The parent is one minimal Content-Length peer for all of them (it plays the host: answers replies and
// completions); an exchange ends when the parent has the events.completed request.
//
// Usage: node tools/scripts/ts-run.mjs e2e/runtime/bench/go-sdk.ts [--rounds=3] [--events=3000] [--starts=20]
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const ROUNDS = Number(args['rounds'] ?? 3);
const EVENTS = Number(args['events'] ?? 3000);
const STARTS = Number(args['starts'] ?? 20);
const CONCURRENCY = [1, 32];

function root(): string {
  for (let dir = process.cwd(); ; dir = resolve(dir, '..')) {
    if (existsSync(join(dir, 'libs/plugin-sdk-go/go.mod'))) return dir;
    if (resolve(dir, '..') === dir) throw new Error('run from inside the workspace');
  }
}
const ROOT = root();
const BENCH = join(ROOT, 'e2e/runtime/bench');

/** Go 1.23+: $GO, `go` on PATH, or Debian's /usr/lib/go-1.NN (what .ci/run installs). */
function findGo(): string {
  const debian = readdirSync('/usr/lib')
    .filter((d) => /^go-1\.\d+$/.test(d))
    .map((d) => `/usr/lib/${d}/bin/go`);
  for (const c of [process.env['GO'], 'go', ...debian].filter((c): c is string => !!c)) {
    const m = /go1\.(\d+)/.exec(spawnSync(c, ['version'], { encoding: 'utf8' }).stdout ?? '');
    if (m && Number(m[1]) >= 23) return c;
  }
  throw new Error('Go 1.23+ is needed (bash .ci/run installs golang-1.23-go)');
}

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

/** Milliseconds from spawn to the answer of host.initialize, median of STARTS starts. */
async function coldStart(command: string, argv: string[], cwd: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    const t0 = performance.now();
    const p = peer(command, argv, cwd);
    await p.initialize();
    times.push(performance.now() - t0);
    await p.close();
  }
  return median(times);
}

async function main(): Promise<void> {
  const go = findGo();
  const build = mkdtempSync(join(tmpdir(), 'go-sdk-bench-'));
  const exe = join(build, 'bench');
  const built = spawnSync(go, ['build', '-trimpath', '-o', exe, '.'], {
    cwd: join(BENCH, 'go-sdk-child'),
    encoding: 'utf8',
    env: { ...process.env, GOTOOLCHAIN: 'local', GOPROXY: 'off', GOFLAGS: '-mod=mod' },
  });
  if (built.status !== 0) throw new Error(`go build failed:\n${built.stderr}`);
  const childDir = join(BENCH, 'go-sdk-child');
  const systems = {
    'go-sdk': peer(exe, ['--host-stdio'], childDir),
    'node-raw': peer(process.execPath, [join(BENCH, 'raw-child.mjs')], BENCH),
  };
  await systems['go-sdk'].initialize(); // raw-child.mjs has no handshake
  for (const s of Object.values(systems)) await load(8, 500, s.call); // warm-up
  const results: Record<string, Record<number, Result[]>> = {};
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
  const goStart = await coldStart(exe, ['--host-stdio'], childDir);
  const nodeSdk = join(ROOT, 'libs/plugin-sdk/dist/index.cjs');
  const nodeStart = existsSync(nodeSdk)
    ? await coldStart(process.execPath, [join(BENCH, 'node-sdk-child.cjs'), '--host-stdio'], BENCH)
    : NaN;
  rmSync(build, { recursive: true, force: true });

  const med = (name: string, c: number, k: keyof Result) => median(results[name]![c]!.map((r) => r[k]));
  const cpuOf = (name: string, c: number) => median(cpu[name]![c]!);
  const lines = [
    `Go SDK stdio exchange: medians of ${ROUNDS} rounds of ${EVENTS} events (6 messages each); ${spawnSync(go, ['version'], { encoding: 'utf8' }).stdout.trim()}, node ${process.version}`,
    '',
    '| system | c | events/s | p50 ms | p99 ms | child CPU µs/exchange |',
    '|---|---|---|---|---|---|',
  ];
  for (const name of Object.keys(systems)) {
    for (const c of CONCURRENCY) {
      lines.push(
        `| ${name} | ${c} | ${med(name, c, 'eps').toFixed(0)} | ${med(name, c, 'p50').toFixed(3)} | ${med(name, c, 'p99').toFixed(3)} | ${cpuOf(name, c).toFixed(0)} |`,
      );
    }
  }
  const ratio = (c: number) => ((100 * med('go-sdk', c, 'eps')) / med('node-raw', c, 'eps')).toFixed(1);
  lines.push(
    '',
    `go-sdk/node-raw events/s: c=1 ${ratio(1)}%, c=32 ${ratio(32)}% (target at c=32: at least 100%)`,
    `go-sdk/node-raw child CPU per exchange: c=32 ${((100 * cpuOf('go-sdk', 32)) / cpuOf('node-raw', 32)).toFixed(1)}%`,
    `cold start (spawn to handshake answered), median of ${STARTS}: go-sdk ${goStart.toFixed(1)} ms, node-sdk ${
      Number.isNaN(nodeStart)
        ? 'not measured (build libs/plugin-sdk first)'
        : `${nodeStart.toFixed(1)} ms (go/node ${((100 * goStart) / nodeStart).toFixed(1)}%)`
    }`,
    `exchanges with an error: ${JSON.stringify(failures)}`,
  );
  console.log(lines.join('\n'));
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
