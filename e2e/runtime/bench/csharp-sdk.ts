// Benchmark of the C# SDK's full stdio exchange beside the raw Node child of the stdio benchmark
// (raw-child.mjs), measured in the same run, and the cold start of a C# plugin beside a Node one and a Go one.
// Not a test: it reports numbers and ratios (target: the C# SDK at least 80% of the raw Node child's events/s
// at 32 events in flight).
//
//   csharp-sdk  csharp-sdk-child (HostSdk from the local feed, dotnet build -c Release, run as
//               `dotnet Bench.dll --host-stdio`): ACK, a Markdown reply mentioning the sender, events.completed
//               once the reply was answered: 6 messages.
//   node-raw    raw-child.mjs: the same 6 messages with minimal framing and no validation.
//   cold start  spawn to the answer of host.initialize: the C# child, node-sdk-child.cjs (the Node SDK's
//               smallest plugin; needs the built SDK) and the Go SDK child (when Go 1.23+ is there).
//
// The parent is one minimal Content-Length peer for all of them (sdk-peer.ts: it plays the host, answers
// replies and completions); an exchange ends when the parent has the events.completed request.
//
// Usage: node tools/scripts/ts-run.mjs e2e/runtime/bench/csharp-sdk.ts [--rounds=3] [--events=3000] [--starts=20]
// (npx nx run e2e-runtime:bench-csharp builds the HostSdk feed and the Node SDK first)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measureRounds, median, sdkPeer, workspaceRoot } from './sdk-peer';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const ROUNDS = Number(args['rounds'] ?? 3);
const EVENTS = Number(args['events'] ?? 3000);
const STARTS = Number(args['starts'] ?? 20);
const CONCURRENCY = [1, 32];
const ROOT = workspaceRoot('libs/plugin-sdk-csharp/package.json');
const BENCH = join(ROOT, 'e2e/runtime/bench');
const dotnetEnv = { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1', DOTNET_SKIP_FIRST_TIME_EXPERIENCE: '1' };

/** Go 1.23+ for the Go cold start: $GO, `go` on PATH, or Debian's /usr/lib/go-1.NN; undefined when none. */
function findGo(): string | undefined {
  const debian = existsSync('/usr/lib')
    ? readdirSync('/usr/lib')
        .filter((d) => /^go-1\.\d+$/.test(d))
        .map((d) => `/usr/lib/${d}/bin/go`)
    : [];
  for (const c of [process.env['GO'], 'go', ...debian].filter((c): c is string => !!c)) {
    const m = /go1\.(\d+)/.exec(spawnSync(c, ['version'], { encoding: 'utf8' }).stdout ?? '');
    if (m && Number(m[1]) >= 23) return c;
  }
  return undefined;
}

/** Milliseconds from spawn to the answer of host.initialize, median of STARTS starts. */
async function coldStart(command: string, argv: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    const t0 = performance.now();
    const p = sdkPeer(command, argv, cwd, env);
    await p.initialize();
    times.push(performance.now() - t0);
    await p.close();
  }
  return median(times);
}

async function main(): Promise<void> {
  const build = mkdtempSync(join(tmpdir(), 'csharp-sdk-bench-'));
  const childDir = join(BENCH, 'csharp-sdk-child');
  const built = spawnSync('dotnet', ['build', '-c', 'Release', '-o', build, '--nologo', '-v', 'q'], {
    cwd: childDir,
    encoding: 'utf8',
    env: dotnetEnv,
  });
  if (built.status !== 0)
    throw new Error(`dotnet build failed (run npx nx run plugin-sdk-csharp:feed first):\n${built.stdout}\n${built.stderr}`);
  const dll = join(build, 'Bench.dll');
  const runtime = spawnSync('dotnet', ['--list-runtimes'], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((l) => l.startsWith('Microsoft.NETCore.App'))
    .map((l) => l.split(' ')[1])
    .join(', ');
  const systems = {
    'csharp-sdk': sdkPeer('dotnet', [dll, '--host-stdio'], childDir, dotnetEnv),
    'node-raw': sdkPeer(process.execPath, [join(BENCH, 'raw-child.mjs')], BENCH),
  };
  await systems['csharp-sdk'].initialize(); // raw-child.mjs has no handshake
  const { med, cpu, failures, table } = await measureRounds(systems, { rounds: ROUNDS, events: EVENTS, concurrency: CONCURRENCY });

  const csStart = await coldStart('dotnet', [dll, '--host-stdio'], childDir, dotnetEnv);
  const nodeSdk = join(ROOT, 'libs/plugin-sdk/dist/index.cjs');
  const nodeStart = existsSync(nodeSdk)
    ? await coldStart(process.execPath, [join(BENCH, 'node-sdk-child.cjs'), '--host-stdio'], BENCH)
    : NaN;
  let goStart = NaN;
  const go = findGo();
  if (go) {
    const exe = join(build, 'go-bench');
    const goBuilt = spawnSync(go, ['build', '-trimpath', '-o', exe, '.'], {
      cwd: join(BENCH, 'go-sdk-child'),
      encoding: 'utf8',
      env: { ...process.env, GOTOOLCHAIN: 'local', GOPROXY: 'off', GOFLAGS: '-mod=mod' },
    });
    if (goBuilt.status === 0) goStart = await coldStart(exe, ['--host-stdio'], join(BENCH, 'go-sdk-child'));
  }
  rmSync(build, { recursive: true, force: true });

  const ms = (v: number, why: string) => (Number.isNaN(v) ? `not measured (${why})` : `${v.toFixed(1)} ms`);
  const lines = [
    `C# SDK stdio exchange: medians of ${ROUNDS} rounds of ${EVENTS} events (6 messages each); .NET runtime ${runtime}, node ${process.version}`,
    '',
    ...table,
  ];
  const ratio = (c: number) => ((100 * med('csharp-sdk', c, 'eps')) / med('node-raw', c, 'eps')).toFixed(1);
  lines.push(
    '',
    `csharp-sdk/node-raw events/s: c=1 ${ratio(1)}%, c=32 ${ratio(32)}% (target at c=32: at least 80%)`,
    `csharp-sdk/node-raw child CPU per exchange: c=32 ${((100 * cpu('csharp-sdk', 32)) / cpu('node-raw', 32)).toFixed(1)}%`,
    `cold start (spawn to handshake answered), median of ${STARTS}: csharp-sdk ${ms(csStart, '')}, node-sdk ${ms(
      nodeStart,
      'build libs/plugin-sdk first',
    )}, go-sdk ${ms(goStart, 'no Go 1.23+')}`,
    `cold start ratios: csharp/node ${((100 * csStart) / nodeStart).toFixed(1)}%, csharp/go ${((100 * csStart) / goStart).toFixed(1)}%`,
    `exchanges with an error: ${JSON.stringify(failures)}`,
  );
  console.log(lines.join('\n'));
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
