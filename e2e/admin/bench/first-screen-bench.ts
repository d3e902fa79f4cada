// Benchmark (not a test): the admin app's first load, against a baseline in
// the same run.
//
//   npx nx run e2e-admin:bench      (builds the host and the app first)
//
// 1. Bundle size: the script, preloads and styles index.html loads first,
//    gzipped (level 9), against the 200 KB budget of gzipped script; the
//    chunks loaded later (the playground's Markdown renderer) listed apart.
// 2. Time to an interactive first screen in Debian's Chromium, from the start
//    of navigation until the screen's main control is rendered and the main
//    thread is idle (requestIdleCallback), each round in a fresh browser
//    context (cold cache), median of ROUNDS:
//    - baseline: a static page with one button and no script, from a bare
//      node:http server on this machine;
//    - sign-in: the app at / of a real host (index.html, its script, GET
//      /api/session answering 401), until the token field and button show;
//    - plugins tab: the same after signing in, until the plugins list with 10
//      installed plugins is rendered.
//    The table shows each median and its ratio to the baseline.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import AdmZip from 'adm-zip';
import { chromium, type Browser, type Page } from 'playwright-core';

const ROOT = process.cwd();
const DIST = join(ROOT, 'dist/apps/admin');
const HOST_MAIN = join(ROOT, 'dist/apps/host/main.cjs');
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/lib/chromium/chromium';
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 9);
const TOKEN = 'bench-admin-token-0123456789';
const BUDGET_KB = 200;

function kb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

function bundleReport(): { firstScriptGzip: number } {
  const html = readFileSync(join(DIST, 'index.html'), 'utf8');
  const first = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)].map((m) => m[1]!);
  const rows: string[] = [];
  let firstScriptGzip = 0;
  let firstScriptRaw = 0;
  for (const f of first) {
    const raw = readFileSync(join(DIST, f));
    const gz = gzipSync(raw, { level: 9 }).length;
    if (f.endsWith('.js')) {
      firstScriptGzip += gz;
      firstScriptRaw += raw.length;
    }
    rows.push(`  first load  ${f.padEnd(40)} ${kb(raw.length).padStart(10)}  gzip ${kb(gz).padStart(9)}`);
  }
  for (const f of readdirSync(join(DIST, 'assets')).filter((x) => x.endsWith('.js') && !html.includes(x))) {
    const raw = readFileSync(join(DIST, 'assets', f));
    rows.push(
      `  on demand   ${`assets/${f}`.padEnd(40)} ${kb(raw.length).padStart(10)}  gzip ${kb(gzipSync(raw, { level: 9 }).length).padStart(9)}`,
    );
  }
  console.log('Bundle (dist/apps/admin):');
  for (const r of rows) console.log(r);
  console.log(
    `  first-load script: ${kb(firstScriptRaw)}, gzip ${kb(firstScriptGzip)} = ${((firstScriptGzip / 1024 / BUDGET_KB) * 100).toFixed(0)}% of the ${BUDGET_KB} KB budget (ratio ${(firstScriptGzip / 1024 / BUDGET_KB).toFixed(2)})\n`,
  );
  return { firstScriptGzip };
}

async function startHost(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const tokenFile = `${dataDir}.token`;
  writeFileSync(tokenFile, TOKEN, { mode: 0o600 });
  const child = spawn(process.execPath, [HOST_MAIN], {
    env: { PATH: process.env['PATH'] ?? '', HOST_PORT: '0', HOST_DATA_DIR: dataDir, HOST_ADMIN_TOKEN_FILE: tokenFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await new Promise<string>((ok, fail) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[^/]+)\//.exec(out);
      if (m) ok(m[1]!);
    });
    child.once('exit', () => fail(new Error(`the host exited:\n${out}`)));
  });
  return { child, url };
}

/** Installs `n` small plugins (the wire-format fixture under different ids) so the list has rows to render. */
async function installPlugins(url: string, n: number): Promise<void> {
  const plugin = readFileSync(join(ROOT, 'e2e/test-fixtures/misbehaving-plugin/plugin.mjs'));
  const manifest = JSON.parse(readFileSync(join(ROOT, 'e2e/test-fixtures/misbehaving-plugin/manifest.json'), 'utf8'));
  for (let i = 0; i < n; i++) {
    const zip = new AdmZip();
    zip.addFile('manifest.json', Buffer.from(JSON.stringify({ ...manifest, pluginId: `com.example.bench${i}`, name: `Bench ${i}` })));
    zip.addFile('plugin.mjs', plugin);
    const form = new FormData();
    form.append('startAfterInstall', 'false');
    form.append('package', new Blob([zip.toBuffer()]), 'p.zip');
    const res = await fetch(`${url}/api/plugins/packages`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: form });
    if (res.status !== 201) throw new Error(`install failed: ${res.status} ${await res.text()}`);
  }
}

/** Milliseconds from navigation start until `ready` holds and the main thread is idle. */
async function timeToInteractive(page: Page, url: string, ready: () => Promise<unknown>): Promise<number> {
  await page.goto(url, { waitUntil: 'commit' });
  await ready();
  return page.evaluate(() => new Promise<number>((r) => requestIdleCallback(() => r(performance.now()), { timeout: 1000 })));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  bundleReport();
  const work = mkdtempSync(join(tmpdir(), 'admin-bench-'));
  const baseline = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<!doctype html><html lang="en"><title>baseline</title><main><label>Token <input></label><button>Sign in</button></main></html>',
    );
  });
  await new Promise<void>((r) => baseline.listen(0, '127.0.0.1', r));
  const baselineUrl = `http://127.0.0.1:${(baseline.address() as { port: number }).port}/`;
  const host = await startHost(join(work, 'data'));
  let browser: Browser | undefined;
  try {
    await installPlugins(host.url, 10);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    const times = { baseline: [] as number[], signIn: [] as number[], plugins: [] as number[] };
    for (let round = 0; round < ROUNDS + 1; round++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const b = await timeToInteractive(page, baselineUrl, () => page.getByRole('button', { name: 'Sign in' }).waitFor());
      const s = await timeToInteractive(page, `${host.url}/`, () => page.getByRole('button', { name: 'Sign in' }).waitFor());
      await page.getByLabel('Admin token').fill(TOKEN);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
      // A new context for the signed-in load would lose the cookie: clear the cache instead.
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.clearBrowserCache');
      const p = await timeToInteractive(page, `${host.url}/plugins`, () => page.locator('li.plugin').nth(9).waitFor());
      await context.close();
      if (round === 0) continue; // warm-up: the browser's own first start
      times.baseline.push(b);
      times.signIn.push(s);
      times.plugins.push(p);
    }
    const base = median(times.baseline);
    console.log(`First screen, time to interactive (median of ${ROUNDS} cold loads, Chromium headless, loopback):`);
    console.log(`  ${'page'.padEnd(36)} ${'median'.padStart(9)} ${'min'.padStart(9)} ${'max'.padStart(9)}  ratio to baseline`);
    for (const [name, xs] of [
      ['baseline: static page, no script', times.baseline],
      ['admin app: sign-in screen', times.signIn],
      ['admin app: plugins tab (10 plugins)', times.plugins],
    ] as const) {
      const m = median(xs);
      console.log(
        `  ${name.padEnd(36)} ${`${m.toFixed(0)} ms`.padStart(9)} ${`${Math.min(...xs).toFixed(0)} ms`.padStart(9)} ${`${Math.max(...xs).toFixed(0)} ms`.padStart(9)}  ${(m / base).toFixed(1)}x`,
      );
    }
  } finally {
    await browser?.close();
    host.child.kill('SIGTERM');
    baseline.close();
    await new Promise((r) => setTimeout(r, 300));
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e: Error) => {
  console.error(e.stack ?? e.message);
  process.exit(1);
});
