// Install benchmark (not a test): installs a realistic Node plugin archive
// with the host's installer and, in the same run, unpacks the same archive
// with `unzip -q`; reports median wall times over 5 rounds, their ratio, and
// the host process's memory growth during the install.
//
//   npx nx run e2e-host-install:bench
//   TMPDIR=/dev/shm npx nx run e2e-host-install:bench   (memory file system: CPU cost only)
//
// Targets: at most 3x unzip's time; memory growth under 100 MB.
import { hostPaths } from '@host/host-core';
import { PluginInstaller } from '@host/host-installer';
import { buildZip, createUnavailableRuntime, testManifest, type ZipEntrySpec } from '@host/host-installer/testing';
import { FilePendingUpdateStore, JsonRegistryStore } from '@host/host-store';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seededRandom } from '../src/versioned-package';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);
const random = seededRandom(42);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

const WORDS = [
  'function',
  'return',
  'const',
  'let',
  'if',
  'else',
  'for',
  'while',
  'await',
  'async',
  'module',
  'exports',
  'require',
  'this',
  'value',
  'options',
  'callback',
  'error',
  'result',
  'buffer',
  'length',
  'index',
  'object',
  'string',
  'number',
  'undefined',
  'null',
  'true',
  'false',
  'new',
  'Promise',
  'resolve',
  'reject',
  'prototype',
  'typeof',
  'instanceof',
] as const;

/** JavaScript-looking text that compresses about as well as real minified-ish sources. */
const BOILERPLATE = [
  "'use strict';",
  'Object.defineProperty(exports, "__esModule", { value: true });',
  'var __importDefault = (this && this.__importDefault) || function (mod) {',
  '    return (mod && mod.__esModule) ? mod : { "default": mod };',
  '};',
  '    if (typeof options !== "object" || options === null) {',
  '        throw new TypeError("The options argument must be an object");',
  '    }',
  '    return new Promise(function (resolve, reject) {',
  '});',
] as const;

function sourceText(bytes: number): string {
  let out = '';
  while (out.length < bytes) {
    if (random() < 0.7) {
      out += `${pick(BOILERPLATE)}\n`;
      continue;
    }
    const id = `${pick(WORDS)}${Math.floor(random() * 8)}`;
    out += `  ${pick(WORDS)} ${id} = ${pick(WORDS)}(${pick(WORDS)}, ${Math.floor(random() * 4)});\n`;
  }
  return out.slice(0, bytes);
}

/** About 4,000 entries, ~18 MB unpacked, ~5 MB zipped: sources, JSON, folders and incompressible binaries. */
function realisticPluginArchive(): { zip: Buffer; entries: number; unpacked: number } {
  const entries: ZipEntrySpec[] = [
    { name: 'manifest.json', data: JSON.stringify(testManifest({ pluginId: 'com.example.bench', version: '1.0.0' }), null, 2) },
    { name: 'index.js', data: sourceText(4000) },
    { name: 'package.json', data: '{"name": "bench-plugin", "version": "1.0.0"}\n' },
    { name: 'node_modules/' },
  ];
  let unpacked = 0;
  for (let p = 0; entries.length < 3960; p++) {
    const pkg = `node_modules/pkg-${p}`;
    entries.push({ name: `${pkg}/` }, { name: `${pkg}/lib/` });
    entries.push({ name: `${pkg}/package.json`, data: `{"name": "pkg-${p}", "version": "${p}.0.0", "main": "lib/index.js"}\n` });
    const files = 8 + Math.floor(random() * 20);
    for (let f = 0; f < files; f++) {
      const size = 1700 + Math.floor(random() * 6600);
      unpacked += size;
      entries.push({ name: `${pkg}/lib/file-${f}.js`, data: sourceText(size) });
    }
  }
  for (let b = 0; b < 40; b++) {
    const data = Buffer.alloc(42_000 + Math.floor(random() * 8_000));
    for (let i = 0; i < data.length; i++) data[i] = Math.floor(random() * 256);
    unpacked += data.length;
    entries.push({ name: `node_modules/native-${b}.node`, data, unixMode: 0o100755 });
  }
  for (const e of entries) if (typeof e.name === 'string' && e.name.endsWith('/')) e.unixMode = 0o040755;
  return { zip: buildZip(entries), entries: entries.length, unpacked };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
const gc = (globalThis as { gc?: () => void }).gc;

async function timeUnzip(archive: string, dir: string): Promise<number> {
  const t = process.hrtime.bigint();
  const r = spawnSync('unzip', ['-q', archive, '-d', dir]);
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.error || r.status !== 0)
    throw new Error(`unzip failed (${r.error?.message ?? r.stderr.toString()}); install it with apt-get install unzip`);
  return ms;
}

async function timeInstall(archive: string, dataDir: string): Promise<{ ms: number; rss: number; heap: number }> {
  const paths = hostPaths(dataDir);
  const store = await JsonRegistryStore.open(paths.stateDir);
  const installer = new PluginInstaller({
    paths,
    store,
    pendingUpdates: new FilePendingUpdateStore(join(paths.stateDir, 'pending')),
    runtime: createUnavailableRuntime(),
  });
  await installer.init();
  gc?.();
  const base = process.memoryUsage();
  let peakRss = base.rss;
  let peakHeap = base.heapUsed;
  const sample = () => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  };
  const timer = setInterval(sample, 5);
  const t = process.hrtime.bigint();
  // From the archive on disk to the installed folder, as the host does after an upload: read from the file in ranges.
  await installer.install({ file: archive });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  sample();
  clearInterval(timer);
  await store.close();
  return { ms, rss: peakRss - base.rss, heap: peakHeap - base.heapUsed };
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'install-bench-'));
  try {
    const { zip, entries, unpacked } = realisticPluginArchive();
    const archive = join(work, 'plugin.zip');
    writeFileSync(archive, zip);
    console.log(
      `archive: ${entries} entries, ${mb(unpacked)} unpacked, ${mb(zip.length)} zipped; ${ROUNDS} rounds${gc ? '' : ' (run with --expose-gc for steadier memory numbers)'}`,
    );
    const unzipMs: number[] = [];
    const install: { ms: number; rss: number; heap: number }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate the order so neither side always gets the warmer page cache.
      const runUnzip = async () => unzipMs.push(await timeUnzip(archive, join(work, `unzip-${round}`)));
      const runInstall = async () => install.push(await timeInstall(archive, join(work, `data-${round}`)));
      if (round % 2 === 0) {
        await runUnzip();
        await runInstall();
      } else {
        await runInstall();
        await runUnzip();
      }
      rmSync(join(work, `unzip-${round}`), { recursive: true, force: true });
      rmSync(join(work, `data-${round}`), { recursive: true, force: true });
      const last = install[install.length - 1]!;
      console.log(
        `round ${round + 1}: unzip ${unzipMs[unzipMs.length - 1]!.toFixed(0)} ms, install ${last.ms.toFixed(0)} ms, rss +${mb(last.rss)}, heap +${mb(last.heap)}`,
      );
    }
    const u = median(unzipMs);
    const i = median(install.map((x) => x.ms));
    // Later rounds reuse memory freed by earlier ones, so the largest growth is the honest figure.
    const rss = Math.max(...install.map((x) => x.rss));
    const heap = Math.max(...install.map((x) => x.heap));
    const ratio = i / u;
    console.log(`\nmedian unzip -q:   ${u.toFixed(0)} ms`);
    console.log(
      `median install:    ${i.toFixed(0)} ms  (${ratio.toFixed(2)}x unzip; target at most 3x) ${ratio <= 3 ? 'OK' : 'OVER TARGET'}`,
    );
    console.log(
      `memory growth:     rss +${mb(rss)}, heap +${mb(heap)} (largest over the rounds; target under 100 MB) ${rss < 100 * 1024 * 1024 ? 'OK' : 'OVER TARGET'}`,
    );
    console.log(
      JSON.stringify({
        entries,
        unpackedBytes: unpacked,
        zippedBytes: zip.length,
        unzipMs: u,
        installMs: i,
        ratio,
        rssGrowthBytes: rss,
        heapGrowthBytes: heap,
      }),
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

void main();
