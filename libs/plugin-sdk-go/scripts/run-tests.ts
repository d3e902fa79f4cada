// Runs `go test -json ./...` in the SDK module (the packer test cross-builds four targets: about 2.5
// minutes on 2 cores with an empty Go build cache, seconds once it is warm) and writes the counts `npm test` sums:
//   node tools/scripts/ts-run.mjs libs/plugin-sdk-go/scripts/run-tests.ts --report reports/counts/plugin-sdk-go.json
// Every test and subtest that passed, failed or was skipped is counted once; a build failure or a
// package that failed without a failing test counts as one failure, so a broken suite is never green.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { findGo, goEnv, goVersion, MIN_GO } from '../toolchain';

const args = process.argv.slice(2);
const reportAt = args.indexOf('--report');
const report = reportAt >= 0 ? resolve(args[reportAt + 1] ?? '') : undefined;
const moduleDir = join(dirname(new URL(import.meta.url).pathname), '..');

const counts = { passed: 0, failed: 0, skipped: 0 };
function finish(code: number): never {
  if (report) {
    mkdirSync(dirname(report), { recursive: true });
    writeFileSync(report, JSON.stringify(counts) + '\n');
  }
  console.log(`go test: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  process.exit(code);
}

let go = '';
try {
  // The oldest toolchain installed that the SDK supports: the claim of go.mod is what is tested.
  go = findGo({ oldest: true });
  console.log(`go test with ${go} (go${goVersion(go)?.join('.')}; the SDK claims Go ${MIN_GO.join('.')} or newer)`);
} catch (error) {
  console.error((error as Error).message);
  counts.failed = 1;
  finish(1);
}

const run = spawnSync(go, ['test', '-json', '-count=1', '-timeout', '600s', './...'], {
  cwd: moduleDir,
  env: goEnv(go),
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
});
const failedPackages = new Set<string>();
const packagesWithFailedTests = new Set<string>();
for (const line of run.stdout.split('\n')) {
  if (!line.startsWith('{')) continue;
  let e: { Action?: string; Test?: string; Package: string; Output?: string };
  try {
    e = JSON.parse(line);
  } catch {
    continue;
  }
  if (e.Action === 'output' && e.Output && /^(--- FAIL|FAIL|panic:)/.test(e.Output.trimStart())) process.stdout.write(e.Output);
  if (!e.Test) {
    if (e.Action === 'fail') failedPackages.add(e.Package);
    continue;
  }
  if (e.Action === 'pass') counts.passed++;
  else if (e.Action === 'skip') counts.skipped++;
  else if (e.Action === 'fail') {
    counts.failed++;
    packagesWithFailedTests.add(e.Package);
  }
}
if (run.stderr) process.stderr.write(run.stderr);
for (const p of failedPackages) if (!packagesWithFailedTests.has(p)) counts.failed++;
if (run.status !== 0 && counts.failed === 0) counts.failed = 1;
finish(run.status === 0 ? 0 : 1);
