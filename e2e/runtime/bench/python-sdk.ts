// Benchmark of the Python SDK's full stdio exchange beside a minimal hand-written
// stdlib Python child, measured in the same run. Not a test: it reports numbers
// and the ratio (target: the SDK at least 70% of the baseline's events/s at 32
// events in flight).
//
//   sdk        python3 plugin.py --host-stdio with host_sdk_v2 (sync handler: runs on
//              the SDK's worker threads) that ACKs, replies, and reports
//              events.completed after the reply was answered: 6 messages.
//   sdk-async  the same with an async handler (a task of the event loop).
//   raw        python-raw-child.py: the same 6 messages, single-threaded, no
//              validation, no rendering.
//
// The parent is one minimal Content-Length peer for all three (it plays the
// host: answers replies and completions); an exchange ends when the parent has
// the events.completed request.
//
//   --compare=DIR adds "sdk-before" and "sdk-async-before": the same plugin on another copy of
//   libs/plugin-sdk-python (e.g. `git archive <commit> libs/plugin-sdk-python | tar -x -C /tmp/old`,
//   then --compare=/tmp/old/libs/plugin-sdk-python), so a change is measured against its baseline
//   in the same run.
//
// Usage: node tools/scripts/ts-run.mjs e2e/runtime/bench/python-sdk.ts [--rounds=5] [--events=3000] [--compare=DIR]
import { join, resolve } from 'node:path';
import { measureRounds, sdkPeer, workspaceRoot, type SdkPeer } from './sdk-peer';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const ROUNDS = Number(args['rounds'] ?? 5);
const EVENTS = Number(args['events'] ?? 3000);
const CONCURRENCY = [1, 32];
const ROOT = workspaceRoot('libs/plugin-sdk-python/host_sdk_v2');
const BENCH = join(ROOT, 'e2e/runtime/bench');

async function main(): Promise<void> {
  const python = process.env['BENCH_PYTHON'] ?? 'python3';
  const env = { ...process.env, PYTHONPATH: join(ROOT, 'libs/plugin-sdk-python'), PYTHONDONTWRITEBYTECODE: '1' };
  const systems: Record<string, SdkPeer> = {
    sdk: sdkPeer(python, ['plugin.py', '--host-stdio'], join(BENCH, 'python-sdk-child'), env),
    'sdk-async': sdkPeer(python, ['plugin.py', '--host-stdio', '--async'], join(BENCH, 'python-sdk-child'), env),
    raw: sdkPeer(python, [join(BENCH, 'python-raw-child.py')], BENCH, env),
  };
  const before = args['compare'] ? resolve(args['compare']) : undefined;
  if (before) {
    const old = { ...env, PYTHONPATH: before };
    systems['sdk-before'] = sdkPeer(python, ['plugin.py', '--host-stdio'], join(BENCH, 'python-sdk-child'), old);
    systems['sdk-async-before'] = sdkPeer(python, ['plugin.py', '--host-stdio', '--async'], join(BENCH, 'python-sdk-child'), old);
  }
  for (const s of Object.values(systems)) await s.initialize();
  const { med, cpu, failures, table } = await measureRounds(systems, { rounds: ROUNDS, events: EVENTS, concurrency: CONCURRENCY });
  const ratio = (name: string, c: number) => ((100 * med(name, c, 'eps')) / med('raw', c, 'eps')).toFixed(1);
  const lines = [
    `Python SDK stdio exchange: medians of ${ROUNDS} rounds of ${EVENTS} events (6 messages each), ${python}`,
    '',
    ...table,
    '',
    `sdk/raw events/s: c=1 ${ratio('sdk', 1)}%, c=32 ${ratio('sdk', 32)}% (target at c=32: at least 70%)`,
    `sdk-async/raw events/s: c=1 ${ratio('sdk-async', 1)}%, c=32 ${ratio('sdk-async', 32)}%`,
    `raw/sdk child CPU per exchange: sdk c=32 ${((100 * cpu('raw', 32)) / cpu('sdk', 32)).toFixed(1)}%, sdk-async c=32 ${((100 * cpu('raw', 32)) / cpu('sdk-async', 32)).toFixed(1)}%`,
    ...(before
      ? [
          `before (${before}): sdk-before/raw c=1 ${ratio('sdk-before', 1)}%, c=32 ${ratio('sdk-before', 32)}%; sdk-async-before/raw c=1 ${ratio('sdk-async-before', 1)}%, c=32 ${ratio('sdk-async-before', 32)}%`,
          `after/before events/s at c=32: sdk ${(med('sdk', 32, 'eps') / med('sdk-before', 32, 'eps')).toFixed(2)}x, sdk-async ${(med('sdk-async', 32, 'eps') / med('sdk-async-before', 32, 'eps')).toFixed(2)}x`,
        ]
      : []),
    `exchanges with an error: ${JSON.stringify(failures)}`,
  ];
  console.log(lines.join('\n'));
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
