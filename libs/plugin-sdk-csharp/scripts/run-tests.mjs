#!/usr/bin/env node
// Runs `dotnet test` on the SDK's xunit project and writes the counts `npm test` sums:
//   node libs/plugin-sdk-csharp/scripts/run-tests.mjs [--feed-built] --report reports/counts/plugin-sdk-csharp.json
// The counts come from the TRX report of the run; a build or restore failure, or a run without a report,
// counts as one failure, so a broken suite is never green.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { buildFeed, dotnetEnv } from './dotnet.mjs';

const args = process.argv.slice(2);
const reportAt = args.indexOf('--report');
const report = reportAt >= 0 ? resolve(args[reportAt + 1]) : undefined;
const sdkDir = join(dirname(new URL(import.meta.url).pathname), '..');

const counts = { passed: 0, failed: 0, skipped: 0 };
function finish(code) {
  if (report) {
    mkdirSync(dirname(report), { recursive: true });
    writeFileSync(report, JSON.stringify(counts) + '\n');
  }
  console.log(`dotnet test: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  process.exit(code);
}

// The sample and the packaging tests restore HostSdk from the local feed, so it is packed first (unless the
// Nx target's dependency on plugin-sdk-csharp:feed just did: --feed-built).
let fed = 0;
try {
  if (!args.includes('--feed-built')) fed = buildFeed();
} catch (error) {
  console.error(error.message);
  counts.failed = 1;
  finish(1);
}
if (fed !== 0) {
  console.error('dotnet pack of the SDK failed');
  counts.failed = 1;
  finish(1);
}
const results = mkdtempSync(join(tmpdir(), 'host-sdk-csharp-tests-'));
const env = dotnetEnv();
const run = spawnSync(
  'dotnet',
  ['test', 'tests/HostSdk.Tests', '--nologo', '--logger', 'trx;LogFileName=results.trx', '--results-directory', results],
  { cwd: sdkDir, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
);
if (run.error) {
  console.error(`cannot run dotnet (${run.error.message}); install the .NET SDK and put dotnet on PATH`);
  counts.failed = 1;
  finish(1);
}
process.stdout.write(run.stdout);
if (run.stderr) process.stderr.write(run.stderr);
const trx = join(results, 'results.trx');
if (existsSync(trx)) {
  const counters = /<Counters\b([^>]*)\/>/.exec(readFileSync(trx, 'utf8'));
  const attr = (name) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(counters?.[1] ?? '')?.[1] ?? 0);
  counts.passed = attr('passed');
  counts.failed = attr('failed') + attr('error') + attr('timeout') + attr('aborted');
  counts.skipped = attr('notExecuted');
}
rmSync(results, { recursive: true, force: true });
if (run.status !== 0 && counts.failed === 0) counts.failed = 1;
finish(run.status === 0 ? 0 : 1);
