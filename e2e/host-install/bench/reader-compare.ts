// Benchmark (not a test): the installer's own ZIP reader against one built on yauzl (yauzl-reader.ts), both
// keeping every check, in the same run. Each reads a file from disk, checks every entry and unpacks it to a
// fresh folder (or refuses it), for:
// - a normal package (the tests' package) and the 4,002-entry package of install-bench.ts;
// - every archive of the attack corpus (@host/host-installer/testing's ATTACK_CORPUS), with its limits.
// Every (file, reader) runs --runs times (default 5) in a child process of its own, the two readers
// alternating which goes first; a child reports the time of the read and unpack and its peak RSS during it
// (VmHWM, reset just before through /proc/self/clear_refs) above its RSS just before. The two packages are also timed in
// this process, warm, alternating. It prints every run, the medians, the yauzl/own ratio of the medians,
// and whether both readers refused each archive with the same code.
//
//   npx nx run e2e-host-install:bench-readers
//   node tools/scripts/ts-run.mjs e2e/host-install/bench/reader-compare.ts --runs=5
import { HostError } from '@host/host-core';
import { DEFAULT_INSTALL_LIMITS, extractEntries, openFileSource, readArchive, type InstallLimits } from '@host/host-installer';
import { ATTACK_CORPUS, testPackage } from '@host/host-installer/testing';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realisticPluginArchive } from './realistic-archive';
import { extractWithYauzl, readArchiveWithYauzl } from './yauzl-reader';

type Reader = 'own' | 'yauzl';
const READERS: Reader[] = ['own', 'yauzl'];
const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const RUNS = Number(args['runs'] ?? 5);

/** Reads, checks and unpacks `file` into `destination`; the refusal's code, or "ok". */
async function unpack(reader: Reader, file: string, destination: string, limits: InstallLimits): Promise<string> {
  try {
    if (reader === 'own') {
      const source = openFileSource(file);
      try {
        const { entries } = readArchive(source, limits);
        await extractEntries({ destination, limits, files: entries.map((entry) => ({ entry, path: entry.path, mode: entry.mode })) });
      } finally {
        source.close();
      }
    } else {
      const archive = await readArchiveWithYauzl(file, limits);
      try {
        await extractWithYauzl(archive, destination, limits);
      } finally {
        archive.close();
      }
    }
    return 'ok';
  } catch (e) {
    if (e instanceof HostError) return e.code;
    throw e;
  }
}

interface Run {
  ms: number;
  code: string;
  /** Peak RSS above the RSS just before the read. */
  peakGrowth: number;
}

/** VmRSS (now) or VmHWM (the peak) of this process, from /proc. */
function statusBytes(field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync('/proc/self/status', 'utf8'));
  if (!m) throw new Error(`/proc/self/status has no ${field}: the memory figures need Linux`);
  return Number(m[1]) * 1024;
}

async function child(): Promise<void> {
  const limits = JSON.parse(args['limits']!) as InstallLimits;
  // Loading this bundle peaks higher than a small read: reset the peak so VmHWM is the read's own.
  writeFileSync('/proc/self/clear_refs', '5');
  const before = statusBytes('VmRSS');
  const t = process.hrtime.bigint();
  const code = await unpack(args['child'] as Reader, args['file']!, args['to']!, limits);
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  process.stdout.write(JSON.stringify({ ms, code, peakGrowth: statusBytes('VmHWM') - before } satisfies Run));
}

function runChild(reader: Reader, file: string, work: string, limits: InstallLimits): Run {
  const to = mkdtempSync(join(work, 'out-'));
  try {
    const r = spawnSync(
      process.execPath,
      [__filename, `--child=${reader}`, `--file=${file}`, `--to=${to}`, `--limits=${JSON.stringify(limits)}`],
      { encoding: 'utf8', maxBuffer: 1024 * 1024 },
    );
    if (r.status !== 0) throw new Error(`${reader} on ${file} exited with ${r.status}: ${r.stderr.slice(-2000)}`);
    return JSON.parse(r.stdout) as Run;
  } finally {
    rmSync(to, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
const list = (xs: number[]) => xs.map((x) => x.toFixed(x < 10 ? 1 : 0)).join(' ');

interface Target {
  name: string;
  file: string;
  limits: InstallLimits;
  expected: string;
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'reader-compare-'));
  try {
    const targets: Target[] = [];
    const add = (name: string, bytes: Buffer, expected: string, limits: Partial<InstallLimits> = {}) => {
      const file = join(work, `${targets.length}.zip`);
      writeFileSync(file, bytes);
      targets.push({ name, file, limits: { ...DEFAULT_INSTALL_LIMITS, ...limits }, expected });
    };
    add('normal package', testPackage(), 'ok');
    add('4,002-entry package', realisticPluginArchive().zip, 'ok');
    // The corpus cases refused by manifest or package rules are whole archives to both readers ("ok").
    for (const c of ATTACK_CORPUS) add(`corpus: ${c.name}`, c.archive(), c.code, c.limits);
    console.log(`${targets.length} archives, ${RUNS} runs each per reader, each run in a child process`);

    const warm: Record<Reader, number[]>[] = [];
    for (const t of targets.slice(0, 2)) {
      const times: Record<Reader, number[]> = { own: [], yauzl: [] };
      for (const reader of READERS) {
        const to = mkdtempSync(join(work, 'warmup-'));
        await unpack(reader, t.file, to, t.limits);
        rmSync(to, { recursive: true, force: true });
      }
      for (let run = 0; run < RUNS; run++) {
        for (const reader of run % 2 === 0 ? READERS : [...READERS].reverse()) {
          const to = mkdtempSync(join(work, 'warm-'));
          const start = process.hrtime.bigint();
          await unpack(reader, t.file, to, t.limits);
          times[reader].push(Number(process.hrtime.bigint() - start) / 1e6);
          rmSync(to, { recursive: true, force: true });
        }
      }
      warm.push(times);
      console.log(
        `${t.name}, in this process (warm): own ${list(times.own)} ms; yauzl ${list(times.yauzl)} ms; yauzl/own ${(median(times.yauzl) / median(times.own)).toFixed(2)}x`,
      );
    }

    const rows: { target: Target; runs: Record<Reader, Run[]> }[] = [];
    for (const target of targets) {
      const runs: Record<Reader, Run[]> = { own: [], yauzl: [] };
      for (let run = 0; run < RUNS; run++) {
        for (const reader of run % 2 === 0 ? READERS : [...READERS].reverse())
          runs[reader].push(runChild(reader, target.file, work, target.limits));
      }
      rows.push({ target, runs });
    }

    console.log(
      '\n| archive | code own / yauzl | own ms (runs) | yauzl ms (runs) | yauzl/own time | own peak MB (runs) | yauzl peak MB (runs) |',
    );
    console.log('|---|---|---|---|---|---|---|');
    let disagreements = 0;
    for (const { target, runs } of rows) {
      const codes = READERS.map((r) => [...new Set(runs[r].map((x) => x.code))].join('+'));
      if (codes[0] !== codes[1]) disagreements++;
      const ms = (r: Reader) => runs[r].map((x) => x.ms);
      const peak = (r: Reader) => runs[r].map((x) => x.peakGrowth);
      const ratio = median(ms('yauzl')) / median(ms('own'));
      console.log(
        `| ${target.name} | ${codes[0]}${codes[0] === codes[1] ? '' : ` / ${codes[1]}`} | ${list(ms('own'))} | ${list(ms('yauzl'))} | ${ratio.toFixed(2)}x | ${peak('own').map(mb).join(' ')} | ${peak('yauzl').map(mb).join(' ')} |`,
      );
    }
    const ratios = rows.map(({ runs }) => median(runs.yauzl.map((x) => x.ms)) / median(runs.own.map((x) => x.ms)));
    const peakRatios = rows.map(
      ({ runs }) => Math.max(1, median(runs.yauzl.map((x) => x.peakGrowth))) / Math.max(1, median(runs.own.map((x) => x.peakGrowth))),
    );
    const corpus = rows.slice(2);
    const summary = {
      runs: RUNS,
      warm: warm.map((w, i) => ({
        archive: targets[i]!.name,
        ownMs: median(w.own),
        yauzlMs: median(w.yauzl),
        ratio: median(w.yauzl) / median(w.own),
      })),
      medianTimeRatio: median(ratios),
      worstTimeRatio: Math.max(...ratios),
      medianPeakRatio: median(peakRatios),
      worstPeakRatio: Math.max(...peakRatios),
      corpusTotalMs: {
        own: corpus.reduce((s, { runs }) => s + median(runs.own.map((x) => x.ms)), 0),
        yauzl: corpus.reduce((s, { runs }) => s + median(runs.yauzl.map((x) => x.ms)), 0),
      },
      codeDisagreements: disagreements,
      unexpectedCodes: rows
        .filter(({ target, runs }) => runs.own.some((x) => x.code !== target.expected && x.code !== 'ok'))
        .map((r) => r.target.name),
    };
    console.log(`\n${JSON.stringify(summary)}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

void (args['child'] ? child() : main());
