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
import { createUnavailableRuntime } from '@host/host-installer/testing';
import { FilePendingUpdateStore, JsonRegistryStore } from '@host/host-store';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realisticPluginArchive } from './realistic-archive';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 5);
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
