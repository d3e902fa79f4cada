import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildZip } from '@host/host-installer/testing';
import { api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';

// A package of about 60 MB uploaded to the built host on its default store (SQL, embedded PGlite). The host's
// peak resident memory (VmHWM of the real host process) may grow by a bounded multiple of the archive: the upload
// goes to disk, and the installer hashes, checks, stores (in 1 MiB chunks) and unpacks it from that file in
// ranges, never holding it whole. Measured on a busy 2-core machine: 1.37x to 1.63x the archive (six runs), once
// 2.12x in a full test run (when the collector runs moves the peak); 2.0x to 2.9x when the archive was read into
// one buffer and checked from it; several gigabytes when it was stored in the database as one value. The bound
// catches the archive held several times over (it does not tell reading from the file from one buffer: the
// collector's timing moves the peak by more than that difference).
const FIXTURE = resolve(__dirname, '../../fixtures/misbehaving-plugin');
const ARCHIVE_MB = 60;
/** The bound: the peak grows by at most this many times the archive's size. */
const PEAK_GROWTH_PER_ARCHIVE = 3;

function kib(status: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
  if (!m) throw new Error(`no ${field} in /proc status`);
  return Number(m[1]);
}

describe('a large package upload on the default store', () => {
  let dataDir: string;
  let host: RunningHost | undefined;
  beforeAll(() => buildHost());
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'host-upload-memory-'));
  });
  afterEach(async () => {
    await host?.stop('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(`${dataDir}.admin-token`, { force: true });
  });

  it(`keeps the host's peak memory within ${PEAK_GROWTH_PER_ARCHIVE}x the archive, and serves the archive back intact`, async () => {
    // A loaded machine can take longer than the usual 15 s to start the host and its embedded database.
    host = await startHost(dataDir, {}, [], { startTimeoutMilliseconds: 90_000 });
    expect(host.output()).toMatch(/store: .*embedded/i);
    const manifest = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8')) as Record<string, unknown>;
    manifest['pluginId'] = 'com.example.large';
    // Incompressible, so the archive is as large as its contents.
    const blob = randomBytes(ARCHIVE_MB * 1024 * 1024);
    const zip = buildZip([
      { name: 'manifest.json', data: Buffer.from(JSON.stringify(manifest)) },
      { name: 'plugin.mjs', data: readFileSync(join(FIXTURE, 'plugin.mjs')) },
      { name: 'assets/blob.bin', data: blob, method: 0 },
    ]);
    const status = `/proc/${host.child.pid}/status`;
    // The peak so far (start, migrations, the admin app) is the baseline.
    const before = kib(readFileSync(status, 'utf8'), 'VmHWM');
    const t0 = performance.now();
    const installed = await api(host, 'POST', '/api/plugins/packages', packageForm(zip));
    const seconds = (performance.now() - t0) / 1000;
    expect(installed.status).toBe(201);
    const after = readFileSync(status, 'utf8');
    const peak = kib(after, 'VmHWM');
    const growthMb = (peak - before) / 1024;
    const archiveMb = zip.length / 1024 / 1024;
    console.log(
      `upload of ${archiveMb.toFixed(1)} MB in ${seconds.toFixed(1)} s: peak RSS ${(before / 1024).toFixed(0)} -> ${(peak / 1024).toFixed(0)} MB ` +
        `(+${growthMb.toFixed(0)} MB, ${(growthMb / archiveMb).toFixed(2)}x the archive), RSS after ${(kib(after, 'VmRSS') / 1024).toFixed(0)} MB`,
    );
    expect(growthMb).toBeLessThan(PEAK_GROWTH_PER_ARCHIVE * archiveMb);

    // A restart reads the archive back from the store (the package folder is unpacked from it when missing).
    await host.stop('SIGTERM');
    rmSync(join(dataDir, 'plugins-v2', 'com.example.large'), { recursive: true, force: true });
    rmSync(join(dataDir, 'state', 'unpacked'), { recursive: true, force: true });
    // It unpacks the 60 MB before it listens.
    host = await startHost(dataDir, {}, [], { startTimeoutMilliseconds: 60_000 });
    expect(host.output()).toContain('unpacked com.example.large from the package store');
    expect(readFileSync(join(dataDir, 'plugins-v2', 'com.example.large', 'assets', 'blob.bin')).equals(blob)).toBe(true);
    const plugins = await api(host, 'GET', '/api/plugins');
    expect(plugins.body.plugins.map((p: { pluginId: string }) => p.pluginId)).toContain('com.example.large');
  }, 300_000);
});
