#!/usr/bin/env node
// The one test command (`npm test`): lint and typecheck every project, then run
// every test suite, and end with one line "N passed, N failed" that totals
// all of them. Suites write machine-readable reports to reports/, which are
// summed here, so a suite that ran nothing cannot look green.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { missingToolchains, missingToolchainsReport } from './toolchains.mjs';

const root = new URL('../..', import.meta.url).pathname;
// First what the suites need beyond Node.js and npm: a missing one stops here, with the command that installs it,
// rather than as failures deep in the run.
const missingReport = missingToolchainsReport(missingToolchains());
if (missingReport.length > 0) {
  for (const line of missingReport) console.error(line);
  console.log('0 passed, 1 failed');
  process.exit(1);
}
const reports = join(root, 'reports');
rmSync(reports, { recursive: true, force: true });
mkdirSync(join(reports, 'jest'), { recursive: true });

const failures = [];
function step(name, cmd, args, opts = {}) {
  console.log(`\n=== ${name}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, FORCE_COLOR: '0' }, ...opts });
  if (r.status !== 0) failures.push(`${name} (exit ${r.status ?? r.signal})`);
  return r.status === 0;
}

const nx = ['nx', 'run-many', '--outputStyle=stream', '--skipNxCache'];
step('format', 'npx', ['prettier', '--check', '.']);
step('lint', 'npx', [...nx, '-t', 'lint']);
step('typecheck', 'npx', [...nx, '-t', 'typecheck']);
step('test', 'npx', [
  ...nx,
  '-t',
  'test',
  '--parallel=1',
  '--',
  '--ci',
  '--json',
  `--outputFile=${join(reports, 'jest')}/$NX_TASK_TARGET_PROJECT.json`,
]);

// Sum every report.
let passed = 0;
let failed = 0;
let skipped = 0;
// What failed, named again at the end: a long run's log is often read from its tail.
const failedNames = [];
const firstLines = (messages) =>
  messages
    .join('\n')
    .replace(/\u001b\[[0-9;]*m/g, '')
    .split('\n')
    .filter((l) => l.trim())
    .slice(0, 6)
    .map((l) => `      ${l.trim().slice(0, 200)}`)
    .join('\n');
const jestDir = join(reports, 'jest');
for (const f of existsSync(jestDir) ? readdirSync(jestDir) : []) {
  const r = JSON.parse(readFileSync(join(jestDir, f), 'utf8'));
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += r.numPendingTests + (r.numTodoTests ?? 0);
  // A suite that failed to load counts as one failure, not zero.
  failed += r.numRuntimeErrorTestSuites ?? 0;
  for (const suite of r.testResults ?? []) {
    const file = relative(root, suite.name);
    const failedTests = (suite.assertionResults ?? []).filter((a) => a.status === 'failed');
    for (const a of failedTests) failedNames.push(`  ${file}: ${a.fullName}\n${firstLines(a.failureMessages ?? [])}`);
    if (!failedTests.length && suite.status === 'failed') failedNames.push(`  ${file}\n${firstLines([suite.message ?? ''])}`);
  }
}
const extraDir = join(reports, 'counts');
for (const f of existsSync(extraDir) ? readdirSync(extraDir) : []) {
  const r = JSON.parse(readFileSync(join(extraDir, f), 'utf8'));
  passed += r.passed;
  failed += r.failed;
  skipped += r.skipped ?? 0;
}
// Lint or typecheck failures are failed checks too.
const stepFailures = failures.filter((f) => !f.startsWith('test ')).length;
failed += stepFailures;
if (failedNames.length) console.log(`\nfailed tests:\n${failedNames.join('\n')}`);
if (failures.length) console.log(`\nfailed steps: ${failures.join(', ')}`);
if (passed + failed === 0) {
  console.log('no tests ran');
  failed = 1;
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || failures.length > 0 ? 1 : 0);
