import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { api, buildHost, packageForm, ROOT, startHost } from '@host/e2e-support';
import { checkConsistent, PLUGIN_ID, seededRandom, versionedPackage } from './versioned-package';

const SEED = Number(process.env['CRASH_SEED'] ?? 20240521);
// The crashing child installs with the file store's registry (registry.json) and checkConsistent reads it,
// so the hosts started on its data directories use the file store too.
const FILE_STORE = { HOST_STORE: 'file' };
const STEPS = ['none', 'extracted', 'journal-written', 'old-moved', 'new-moved', 'registry-written'] as const;

describe(`crash safety (seed ${SEED}; replay with CRASH_SEED=${SEED})`, () => {
  let work: string;
  let childJs: string;
  beforeAll(async () => {
    buildHost();
    // Inside node_modules so the bundle resolves its npm packages.
    const cache = join(ROOT, 'node_modules', '.cache');
    mkdirSync(cache, { recursive: true });
    work = mkdtempSync(join(cache, 'crash-e2e-'));
    childJs = join(work, 'crash-child.cjs');
    await build({
      entryPoints: [join(__dirname, 'crash-child.ts')],
      outfile: childJs,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      packages: 'external',
      tsconfig: join(ROOT, 'tsconfig.base.json'),
      logLevel: 'warning',
    });
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('an installer process killed right after any step recovers to the old or the new version', async () => {
    const random = seededRandom(SEED);
    const files = 120;
    const dataDir = mkdtempSync(join(tmpdir(), 'crash-steps-'));
    try {
      let expectedAfterOk: string | null = null;
      for (let i = 1; i <= 12; i++) {
        const version = `1.${i}.0`;
        const crashAt = STEPS[Math.floor(random() * STEPS.length)]!;
        const r = spawnSync(process.execPath, [childJs, dataDir, version, crashAt, String(files)], { encoding: 'utf8', timeout: 60_000 });
        // A fresh install has no old folder to move, so it never reaches "old-moved".
        const crashes = crashAt !== 'none' && !(crashAt === 'old-moved' && expectedAfterOk === null);
        if (!crashes) expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
        else expect(r.signal).toBe('SIGKILL');
        // The real host's start runs recovery; then every invariant must hold.
        const host = await startHost(dataDir, FILE_STORE);
        const listed = await api(host, 'GET', '/api/plugins');
        expect((await host.stop('SIGTERM')).code).toBe(0);
        const state = checkConsistent(dataDir, files);
        const previous = expectedAfterOk;
        // A crash before the new folder is in place keeps the old version; after, the new one.
        const landed = !crashes || crashAt === 'new-moved' || crashAt === 'registry-written';
        expect(state.version).toBe(landed ? version : previous);
        expect(listed.body.plugins.map((p: { version: string }) => p.version)).toEqual(state.version ? [state.version] : []);
        expectedAfterOk = state.version;
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('the real host killed at random moments during installs and updates stays consistent', async () => {
    const random = seededRandom(SEED + 1);
    const files = 600;
    const dataDir = mkdtempSync(join(tmpdir(), 'crash-host-'));
    try {
      // Measure how long one update takes here, to spread the kills over it.
      let host = await startHost(dataDir, FILE_STORE);
      const t0 = Date.now();
      expect((await api(host, 'POST', '/api/plugins/packages', packageForm(versionedPackage('1.0.0', files)))).status).toBe(201);
      const installMs = Date.now() - t0;
      let kills = 0;
      for (let i = 1; i <= 8; i++) {
        const version = `2.${i}.0`;
        const form = packageForm(versionedPackage(version, files));
        const delay = Math.floor(random() * installMs * 2.5);
        const op = (async () => {
          const up = await api(host, 'POST', '/api/plugins/packages', form);
          if (up.status === 409) await api(host, 'POST', `/api/plugins/packages/pending/${up.body.pendingUpdate.id}/confirm`, {});
        })().catch(() => undefined);
        await new Promise((r) => setTimeout(r, delay));
        const exit = await host.stop('SIGKILL');
        if (exit.signal === 'SIGKILL') kills++;
        await op;
        host = await startHost(dataDir, FILE_STORE);
        const state = checkConsistent(dataDir, files);
        expect(state.version === null || /^[12]\.\d+\.0$/.test(state.version)).toBe(true);
        const detail = await api(host, 'GET', `/api/plugins/${PLUGIN_ID}`);
        expect(detail.body.plugin?.version ?? null).toBe(state.version);
      }
      expect(kills).toBeGreaterThan(0);
      await host.stop('SIGTERM');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
