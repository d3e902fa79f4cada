// The admin app's dashboard in Debian's Chromium against a real host started here: a burst of console
// messages and a plugin whose handler fails some of them move the charts' figures while the page stays
// open (it polls GET /api/stats), the health table shows each plugin's error rate and last error, and a
// plugin that cannot start raises an alert whose link opens the page where it is handled.
import { ADMIN_TOKEN, api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';
import AdmZip from 'adm-zip';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { accessibilityViolations, CHROMIUM, launchChromium, screenshot } from './browser';

const ROOT = resolve(__dirname, '../../..');
const ADMIN_INDEX = join(ROOT, 'dist/apps/admin/index.html');
const FIXTURE = join(ROOT, 'e2e/test-fixtures/misbehaving-plugin');
const FLAKY = 'com.example.flaky';
const BROKEN = 'com.example.broken';

let work: string;
let host: RunningHost;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

/** The wire-format fixture plugin under another id, started with `mode`. */
function fixtureZip(pluginId: string, name: string, mode?: string): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8'));
  manifest.pluginId = pluginId;
  manifest.name = name;
  if (mode) manifest.transport.stdio.args = ['plugin.mjs', '--host-stdio', mode];
  const zip = new AdmZip();
  zip.addFile('manifest.json', Buffer.from(JSON.stringify(manifest)));
  zip.addFile('plugin.mjs', readFileSync(join(FIXTURE, 'plugin.mjs')));
  return zip.toBuffer();
}

const say = (text: string) =>
  api(host, 'POST', '/api/console/messages', { conversation: { type: 'group', id: 'g1' }, sender: { id: 'u1' }, text });

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM}: apt-get install chromium (.ci/run does it).`);
  if (!existsSync(ADMIN_INDEX)) throw new Error(`${ADMIN_INDEX} is missing: run "npx nx run admin:build".`);
  work = mkdtempSync(join(tmpdir(), 'e2e-dashboard-'));
  if (!existsSync(join(ROOT, 'dist/apps/host/main.cjs'))) buildHost();
  host = await startHost(join(work, 'data'));
  browser = await launchChromium();
  const context = await browser.newContext({ baseURL: host.url, viewport: { width: 1280, height: 900 }, locale: 'en-US' });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await host?.stop();
  rmSync(work, { recursive: true, force: true });
});

afterEach(() => {
  expect(pageErrors).toEqual([]);
});

it('is the first screen after sign-in, and says that nothing needs the operator on a new host', async () => {
  await page.goto('/');
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
  await page.getByText('Nothing needs you now.').waitFor();
  await page.getByText('No plugins yet.').waitFor();
  expect(await page.getByTestId('dashboard-totals').textContent()).toContain('Last hour: 0 events in, 0 deliveries failed or expired');
  expect(await page.getByRole('img', { name: '0 events in over the last hour; 0.0 per second now.' }).count()).toBe(1);
  expect(await page.getByRole('img', { name: 'No event completed in the last hour.' }).count()).toBe(1);
  expect(await accessibilityViolations(page)).toEqual([]);
});

it('follows a burst of messages and a failing handler in its charts and health table, and alerts on a plugin that cannot start', async () => {
  const installed = await api(
    host,
    'POST',
    '/api/plugins/packages',
    packageForm(fixtureZip(FLAKY, 'Flaky'), { startAfterInstall: 'true' }),
  );
  expect(installed.status).toBe(201);
  // crash-on-start exits before the handshake: the start fails and the plugin waits for the operator.
  const broken = await api(
    host,
    'POST',
    '/api/plugins/packages',
    packageForm(fixtureZip(BROKEN, 'Broken', 'crash-on-start'), { startAfterInstall: 'true' }),
  );
  expect(broken.body.plugin?.state ?? (await api(host, 'GET', `/api/plugins/${BROKEN}`)).body.plugin.state).toBe('failed');

  // The burst: 20 echoes and 6 calls with invalid params, whose handler then completes with the call's error.
  const answers = await Promise.all([
    ...Array.from({ length: 20 }, (_, i) => say(`/echo hi ${i}`)),
    ...Array.from({ length: 6 }, () => say('/invalid x')),
  ]);
  expect(answers.map((a) => a.status)).toEqual(Array(26).fill(200));

  // The page was not reloaded: its next polls bring the new figures.
  const totals = page.getByTestId('dashboard-totals');
  await page.waitForFunction(
    () =>
      /Last hour: 26 events in, 6 deliveries failed or expired/.test(
        document.querySelector('[data-testid="dashboard-totals"]')?.textContent ?? '',
      ),
    undefined,
    { timeout: 20_000 },
  );
  expect(await totals.textContent()).toMatch(/now \d+\.\d events\/s/);
  await page.getByRole('img', { name: /^26 events in over the last hour; [\d.]+ per second now\.$/ }).waitFor();
  await page.getByRole('img', { name: /^Latest latency: p50 \d+ ms, p99 \d+ ms\.$/ }).waitFor();
  // The events chart's axis grew from its empty scale; its line has points.
  expect(Number(await page.getByTestId('chart-events').getAttribute('data-max'))).toBeGreaterThan(0);
  expect(await page.getByTestId('chart-events').locator('path').getAttribute('d')).toMatch(/^M[\d.]+,[\d.]+/);
  expect(await page.getByTestId('chart-latency').locator('path').first().getAttribute('d')).toMatch(/^M[\d.]+,[\d.]+/);

  const flaky = page.locator(`tr[data-plugin-id="${FLAKY}"]`);
  await flaky.getByText('23.1% (6 of 26)').waitFor();
  expect(await flaky.textContent()).toContain('Running');
  expect(await flaky.locator('code').textContent()).toMatch(/\S/);
  const brokenRow = page.locator(`tr[data-plugin-id="${BROKEN}"]`);
  await brokenRow.getByText('No deliveries').waitFor();

  const alert = page.locator(`li[data-alert="pluginFailed"][data-plugin-id="${BROKEN}"]`);
  await alert.waitFor();
  expect(await alert.textContent()).toContain(`${BROKEN} has failed and waits for you`);
  expect(await page.locator('li[data-alert]').count()).toBe(1);
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'dashboard-01-burst');

  // What the page drew is what the host answers.
  const stats = (await api(host, 'GET', '/api/stats')).body;
  expect(stats.plugins.find((p: { pluginId: string }) => p.pluginId === FLAKY)).toMatchObject({
    deliveries: 26,
    failed: 6,
    state: 'running',
  });

  await alert.getByRole('link', { name: 'Open the plugin to restart it' }).click();
  await page.getByRole('heading', { name: 'Broken', level: 1 }).waitFor();
  await page.getByRole('link', { name: 'Dashboard', exact: true }).click();
  await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
});

it('shows events as they arrive on the live events page, filters them, pauses, and opens one to its deliveries and replies', async () => {
  await page.getByRole('link', { name: 'Live events', exact: true }).click();
  await page.getByRole('heading', { name: 'Live events', level: 1 }).waitFor();
  await page.getByText('Live: events appear as they arrive.').waitFor();
  // The stream replays the newest records first: the burst of the test before is there.
  await page.locator('li.event-item').nth(25).waitFor();

  expect((await say('/echo fresh-one')).status).toBe(200);
  const fresh = page.locator('li.event-item', { hasText: 'fresh-one' });
  await fresh.waitFor();

  await page.getByLabel('Outcome').selectOption('failed');
  await page.getByText('6 of 27 events shown (the newest 200 are kept here).').waitFor();
  expect(await page.locator('li.event-item', { hasText: '/invalid x' }).count()).toBe(6);
  await page.getByLabel('Outcome').selectOption('');
  await page.getByLabel('Plugin').selectOption(FLAKY);
  await page.getByLabel('Text or event id').fill('fresh');
  await page.getByText('1 of 27 events shown (the newest 200 are kept here).').waitFor();
  expect(await accessibilityViolations(page)).toEqual([]);

  await page.getByRole('button', { name: 'Pause' }).click();
  expect((await say('/echo while-paused')).status).toBe(200);
  await page.getByText('Paused; events that arrived since: 1.').waitFor();
  expect(await page.locator('li.event-item', { hasText: 'while-paused' }).count()).toBe(0);
  await page.getByRole('button', { name: 'Resume' }).click();
  await page.getByLabel('Text or event id').fill('');
  await page.locator('li.event-item', { hasText: 'while-paused' }).waitFor();

  await fresh.locator('summary').click();
  const deliveries = fresh.locator('table tbody tr:not(.event-log-row)');
  expect(await deliveries.count()).toBe(1);
  expect(await deliveries.first().textContent()).toContain(FLAKY);
  expect(await deliveries.first().textContent()).toContain('completed');
  expect(await fresh.locator('.event-replies').textContent()).toContain('fresh-one');
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'dashboard-02-live-events');
});
