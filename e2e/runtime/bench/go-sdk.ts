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
//   go-sdk@REF with --baseline=REF: the same child built from the Go SDK of a git commit (git archive of
//              libs/plugin-sdk-go and go-sdk-child at REF), so a change is measured against the code before
//              it in the same run.
//
// Usage: node tools/scripts/ts-run.mjs e2e/runtime/bench/go-sdk.ts [--rounds=7] [--events=3000] [--starts=20] [--baseline=main]
//        [--cpuprofile=go-sdk.pprof]   a CPU profile of the go-sdk child (go tool pprof -top <profile>)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { findGo, goEnv } from '@host/plugin-sdk-go/toolchain';
import { measureRounds, median, sdkPeer, workspaceRoot, type SdkPeer } from './sdk-peer';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const ROUNDS = Number(args['rounds'] ?? 7);
const EVENTS = Number(args['events'] ?? 3000);
const STARTS = Number(args['starts'] ?? 20);
const BASELINE = args['baseline'];
const PROFILE = args['cpuprofile'];
const CONCURRENCY = [1, 32];
const ROOT = workspaceRoot('libs/plugin-sdk-go/go.mod');
const BENCH = join(ROOT, 'e2e/runtime/bench');

/** Milliseconds from spawn to the answer of host.initialize, median of STARTS starts. */
async function coldStart(command: string, argv: string[], cwd: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    const t0 = performance.now();
    const p = sdkPeer(command, argv, cwd);
    await p.initialize();
    times.push(performance.now() - t0);
    await p.close();
  }
  return median(times);
}

/** Builds the benchmark child of the workspace at `root` into `exe`. */
function buildChild(go: string, root: string, exe: string): void {
  const built = spawnSync(go, ['build', '-trimpath', '-o', exe, '.'], {
    cwd: join(root, 'e2e/runtime/bench/go-sdk-child'),
    encoding: 'utf8',
    env: goEnv(go),
  });
  if (built.status !== 0) throw new Error(`go build failed:\n${built.stderr}`);
}

/** The Go SDK and the benchmark child as they were at a git commit, unpacked under `dir`. */
function checkout(ref: string, dir: string): string {
  mkdirSync(dir, { recursive: true });
  const archive = spawnSync('git', ['archive', '--format=tar', ref, 'libs/plugin-sdk-go', 'e2e/runtime/bench/go-sdk-child'], {
    cwd: ROOT,
    maxBuffer: 256 * 1024 * 1024,
  });
  if (archive.status !== 0) throw new Error(`git archive ${ref} failed: ${archive.stderr.toString()}`);
  const untar = spawnSync('tar', ['-x', '-C', dir], { input: archive.stdout });
  if (untar.status !== 0) throw new Error(`tar failed: ${untar.stderr.toString()}`);
  return dir;
}

async function main(): Promise<void> {
  const go = findGo();
  const build = mkdtempSync(join(tmpdir(), 'go-sdk-bench-'));
  const exe = join(build, 'bench');
  buildChild(go, ROOT, exe);
  const childDir = join(BENCH, 'go-sdk-child');
  const baseline = BASELINE ? `go-sdk@${BASELINE}` : undefined;
  const env = PROFILE ? { ...process.env, GO_SDK_BENCH_CPUPROFILE: resolve(PROFILE) } : process.env;
  const systems: Record<string, SdkPeer> = { 'go-sdk': sdkPeer(exe, ['--host-stdio'], childDir, env) };
  const old = join(build, 'baseline-bin');
  if (baseline) {
    buildChild(go, checkout(BASELINE!, join(build, 'baseline')), old);
    systems[baseline] = sdkPeer(old, ['--host-stdio'], childDir);
  }
  systems['node-raw'] = sdkPeer(process.execPath, [join(BENCH, 'raw-child.mjs')], BENCH);
  for (const [name, system] of Object.entries(systems)) if (name !== 'node-raw') await system.initialize(); // raw-child.mjs has no handshake
  const { med, cpu, failures, table } = await measureRounds(systems, { rounds: ROUNDS, events: EVENTS, concurrency: CONCURRENCY });
  const goStart = await coldStart(exe, ['--host-stdio'], childDir);
  const baselineStart = baseline ? await coldStart(old, ['--host-stdio'], childDir) : NaN;
  const nodeSdk = join(ROOT, 'libs/plugin-sdk/dist/index.cjs');
  const nodeStart = existsSync(nodeSdk)
    ? await coldStart(process.execPath, [join(BENCH, 'node-sdk-child.cjs'), '--host-stdio'], BENCH)
    : NaN;
  rmSync(build, { recursive: true, force: true });

  const lines = [
    `Go SDK stdio exchange: medians of ${ROUNDS} rounds of ${EVENTS} events (6 messages each); ${spawnSync(go, ['version'], { encoding: 'utf8' }).stdout.trim()}, node ${process.version}`,
    '',
    ...table,
  ];
  const ratio = (name: string, c: number) => ((100 * med(name, c, 'eps')) / med('node-raw', c, 'eps')).toFixed(1);
  const cpuRatio = (name: string) => ((100 * cpu(name, 32)) / cpu('node-raw', 32)).toFixed(1);
  lines.push(
    '',
    `go-sdk/node-raw events/s: c=1 ${ratio('go-sdk', 1)}%, c=32 ${ratio('go-sdk', 32)}% (target at c=32: at least 100%)`,
    `go-sdk/node-raw child CPU per exchange: c=32 ${cpuRatio('go-sdk')}%`,
    ...(baseline
      ? [
          `${baseline}/node-raw events/s: c=1 ${ratio(baseline, 1)}%, c=32 ${ratio(baseline, 32)}%; child CPU per exchange c=32 ${cpuRatio(baseline)}%`,
          `go-sdk/${baseline} events/s: c=1 ${((100 * med('go-sdk', 1, 'eps')) / med(baseline, 1, 'eps')).toFixed(1)}%, c=32 ${((100 * med('go-sdk', 32, 'eps')) / med(baseline, 32, 'eps')).toFixed(1)}%`,
        ]
      : []),
    `cold start (spawn to handshake answered), median of ${STARTS}: go-sdk ${goStart.toFixed(1)} ms${
      baseline ? `, ${baseline} ${baselineStart.toFixed(1)} ms` : ''
    }, node-sdk ${
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
