// The pieces the SDK exchange benchmarks share (python-sdk.ts, go-sdk.ts; run.ts uses the load loop): a
// minimal Content-Length peer that plays the host for one plugin child (answers replies and completions),
// the event it sends, and the closed-loop load with its latencies.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface Result {
  eps: number;
  p50: number;
  p99: number;
}

/** The workspace folder: the first folder up from the current one that holds `marker`. */
export function workspaceRoot(marker: string): string {
  for (let dir = process.cwd(); ; dir = resolve(dir, '..')) {
    if (existsSync(join(dir, marker))) return dir;
    if (resolve(dir, '..') === dir) throw new Error('run from inside the workspace');
  }
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export interface SysCounters {
  syscr: number;
  syscw: number;
  switches: number;
}

function sysCountersOf(pid: number | undefined): SysCounters {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    const field = (name: string) => Number(new RegExp(`${name}: (\\d+)`).exec(io)![1]);
    let switches = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const status = readFileSync(`/proc/${pid}/task/${task}/status`, 'utf8');
      for (const m of status.matchAll(/ctxt_switches:\s+(\d+)/g)) switches += Number(m[1]);
    }
    return { syscr: field('syscr'), syscw: field('syscw'), switches };
  } catch {
    return { syscr: NaN, syscw: NaN, switches: NaN };
  }
}

/**
 * CPU seconds the threads of `pid` ran so far (schedstat): all of them, and its main thread alone.
 * Throws where the kernel has no schedstat.
 */
export function threadCpuSecondsOf(pid: number): { all: number; main: number } {
  let all = 0;
  let main = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const ns = Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    all += ns;
    if (task === String(pid)) main = ns;
  }
  return { all: all / 1e9, main: main / 1e9 };
}

/**
 * CPU seconds a process used so far: the nanoseconds each of its threads ran (schedstat), or where the
 * kernel has no schedstat the user and system time of /proc/<pid>/stat, counted in 10 ms ticks (too coarse
 * for a few thousand exchanges of 20 µs).
 */
export function cpuSecondsOf(pid: number | undefined): number {
  try {
    return threadCpuSecondsOf(pid!).all;
  } catch {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      return NaN;
    }
  }
}

/** One plugin child behind a minimal host-side peer. */
export interface SdkPeer {
  initialize(): Promise<void>;
  /** One exchange: resolves when the child reported events.completed for a new event. */
  call(): Promise<void>;
  failures(): number;
  /** CPU seconds the child used so far, from /proc (Linux; see cpuSecondsOf). */
  cpuSeconds(): number;
  /** The child's read and write system calls and context switches (all threads) so far, from /proc (Linux). */
  sysCounters(): SysCounters;
  /** How many chunks the peer has read from the child's stdout so far (each is one 'data' event). */
  reads(): number;
  close(): Promise<void>;
}

export function benchEvent(eventId: string): unknown {
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

// The peer plays the host as cheaply as it can, so that the children, not the peer, limit an exchange
// (with JSON.stringify for every frame it spent 22 µs per exchange and ran a whole core at 32 in flight,
// whichever child it served): the event and the answers are filled into text made once; what the child
// sends is still parsed whole.
const EVENT_ID = '@EVENT-ID@';
const EVENT_TEMPLATE = JSON.stringify(benchEvent(EVENT_ID)).split(EVENT_ID);
if (EVENT_TEMPLATE.join('e1') !== JSON.stringify(benchEvent('e1'))) throw new Error('the event template differs from benchEvent');
const REPLY_RESULT = JSON.stringify({ accepted: true, messageId: 'out-1', target: { type: 'group', id: 'g1' } });

/** One frame: the Content-Length header and the JSON text. */
function frame(json: string): Buffer {
  return Buffer.from(`Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`);
}

/** The Content-Length of a frame's header block (the one header every child writes, or among others). */
function contentLength(header: string): number {
  if (header.startsWith('Content-Length: ') && !header.includes('\r\n')) return Number(header.slice(16));
  return Number(/Content-Length: (\d+)/i.exec(header)![1]);
}

export function sdkPeer(command: string, argv: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): SdkPeer {
  const child: ChildProcess = spawn(command, argv, {
    cwd,
    stdio: ['pipe', 'pipe', 'inherit'],
    env,
  });
  let buf: Buffer = Buffer.alloc(0);
  let nextId = 1;
  let failures = 0;
  let reads = 0;
  const completions = new Map<string, () => void>();
  const responses = new Map<number, (m: any) => void>();
  const write = (m: unknown) => child.stdin!.write(frame(JSON.stringify(m)));
  child.stdout!.on('data', (chunk: Buffer) => {
    reads++;
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    for (;;) {
      const h = buf.indexOf('\r\n\r\n');
      if (h < 0) return;
      const len = contentLength(buf.toString('latin1', 0, h));
      if (buf.length < h + 4 + len) return;
      const msg = JSON.parse(buf.toString('utf8', h + 4, h + 4 + len));
      buf = buf.subarray(h + 4 + len);
      if (msg.method === 'messages.reply') {
        child.stdin!.write(frame(`{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":${REPLY_RESULT}}`));
      } else if (msg.method === 'events.completed') {
        child.stdin!.write(frame(`{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":{"recorded":true}}`));
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
        child.stdin!.write(frame(`{"jsonrpc":"2.0","id":${id},"method":"events.message","params":${EVENT_TEMPLATE.join(eventId)}}`));
      }),
    failures: () => failures,
    reads: () => reads,
    sysCounters: () => sysCountersOf(child.pid),
    cpuSeconds: () => cpuSecondsOf(child.pid),
    close: () =>
      new Promise<void>((r) => {
        if (child.exitCode !== null) return r();
        child.once('exit', () => r());
        child.stdin!.end();
        setTimeout(() => child.kill('SIGKILL'), 3000).unref();
      }),
  };
}

export async function load(concurrency: number, total: number, once: () => Promise<unknown>): Promise<Result> {
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

/** Medians over rounds of each system at each concurrency, and the child's CPU per exchange. */
export interface Measurement {
  med(name: string, c: number, k: keyof Result): number;
  cpu(name: string, c: number): number;
  failures: Record<string, number>;
  /** A Markdown table of every system and concurrency. */
  table: string[];
}

/**
 * Runs `rounds` rounds of `events` exchanges per system and concurrency, after a short warm-up, taking
 * turns between the systems so a busy moment of the machine hits them alike; closes the systems.
 */
/** What one round of one child at one concurrency measured; everything but Result is per exchange. */
interface Sample extends Result {
  /** The child's CPU µs: unlike events/s it hardly depends on what else runs on the machine. */
  cpu: number;
  /** The peer's own CPU µs, reads and context switches: a child that hands the peer its frames in fewer,
   * larger chunks costs it less, and one that keeps it waiting shows as switches. */
  peerCpu: number;
  peerReads: number;
  peerSwitches: number;
  /** The child's read and write system calls and context switches. */
  childReads: number;
  childWrites: number;
  childSwitches: number;
}

/** The running totals a Sample is the difference of (CPU in µs). */
function totals(s: SdkPeer) {
  const child = s.sysCounters();
  const peer = process.cpuUsage();
  return {
    cpu: s.cpuSeconds() * 1e6,
    peerCpu: peer.user + peer.system,
    peerReads: s.reads(),
    peerSwitches: sysCountersOf(process.pid).switches,
    childReads: child.syscr,
    childWrites: child.syscw,
    childSwitches: child.switches,
  };
}

export async function measureRounds(
  systems: Record<string, SdkPeer>,
  o: { rounds: number; events: number; concurrency: number[] },
): Promise<Measurement> {
  for (const s of Object.values(systems)) await load(8, 500, s.call); // warm-up
  const samples: Record<string, Record<number, Sample[]>> = {};
  for (let round = 0; round < o.rounds; round++) {
    for (const c of o.concurrency) {
      for (const [name, s] of Object.entries(systems)) {
        const before = totals(s);
        const result = await load(c, o.events, s.call);
        const after = totals(s);
        const perExchange = Object.fromEntries(
          Object.entries(after).map(([k, v]) => [k, (v - before[k as keyof typeof before]) / o.events]),
        ) as typeof after;
        ((samples[name] ??= {})[c] ??= []).push({ ...result, ...perExchange });
      }
    }
    const top = Math.max(...o.concurrency);
    const perSystem = Object.keys(systems).map((name) => `${name} ${samples[name]![top]![round]!.eps.toFixed(0)}`);
    process.stdout.write(`round ${round + 1}/${o.rounds}, events/s at c=${top}: ${perSystem.join(', ')}\n`);
  }
  const failures = Object.fromEntries(Object.entries(systems).map(([n, s]) => [n, s.failures()]));
  for (const s of Object.values(systems)) await s.close();
  const med = (name: string, c: number, k: keyof Sample) => median(samples[name]![c]!.map((r) => r[k]));
  const table = [
    '| system | c | events/s | p50 ms | p99 ms | child CPU µs/exchange | peer CPU µs/exchange | peer reads, switches/exchange | child reads, writes, switches/exchange |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const name of Object.keys(systems)) {
    for (const c of o.concurrency) {
      const m = (k: keyof Sample, digits: number) => med(name, c, k).toFixed(digits);
      table.push(
        `| ${name} | ${c} | ${m('eps', 0)} | ${m('p50', 3)} | ${m('p99', 3)} | ${m('cpu', 0)} | ${m('peerCpu', 0)} | ${m('peerReads', 2)}, ${m('peerSwitches', 2)} | ${m('childReads', 2)}, ${m('childWrites', 2)}, ${m('childSwitches', 2)} |`,
      );
    }
  }
  return { med, cpu: (name, c) => med(name, c, 'cpu'), failures, table };
}
