// From a user's message to the plugin log line that answered it, in Debian's Chromium against a real host
// started here: a stdio plugin on the Node SDK (e2e/test-fixtures/logging-plugin, packed with the built SDK) logs
// inside its handler; GET /api/events/{eventId}/logs answers those lines and no others (not its stderr, not
// onStart's line), and the Live events page shows them under the plugin's delivery when the event is opened,
// in English and in Chinese.
import { ADMIN_TOKEN, api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';
import AdmZip from 'adm-zip';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { accessibilityViolations, CHROMIUM, launchChromium, screenshot } from './browser';

const ROOT = resolve(__dirname, '../../..');
const ADMIN_INDEX = join(ROOT, 'dist/apps/admin/index.html');
const FIXTURE = join(ROOT, 'e2e/test-fixtures/logging-plugin');
const WIRE_FIXTURE = join(ROOT, 'e2e/test-fixtures/misbehaving-plugin');
const CLAIMER = 'com.example.claimer';
const SDK = join(ROOT, 'libs/plugin-sdk');
const FORECAST = 'com.example.forecast';

let work: string;
let host: RunningHost;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
/** The first /forecast event, answered before the claimer plugin was installed (so never delivered to it). */
let lisbonEventId = '';

/** The fixture with the built Node SDK beside it, as `host-plugin pack` lays a package out. */
function fixtureZip(): Buffer {
  const zip = new AdmZip();
  for (const name of ['manifest.json', 'plugin.mjs']) zip.addFile(name, readFileSync(join(FIXTURE, name)));
  const into = 'node_modules/@host/plugin-sdk-v2';
  zip.addFile(`${into}/package.json`, readFileSync(join(SDK, 'package.json')));
  for (const name of readdirSync(join(SDK, 'dist')).filter((n) => /\.(mjs|cjs)$/.test(n)))
    zip.addFile(`${into}/dist/${name}`, readFileSync(join(SDK, 'dist', name)));
  return zip.toBuffer();
}

/** The wire-format fixture under another id: its "/log" command sends log.write naming any event id it is told. */
function claimerZip(): Buffer {
  const manifest = JSON.parse(readFileSync(join(WIRE_FIXTURE, 'manifest.json'), 'utf8'));
  manifest.pluginId = CLAIMER;
  manifest.name = 'Claimer';
  const zip = new AdmZip();
  zip.addFile('manifest.json', Buffer.from(JSON.stringify(manifest)));
  zip.addFile('plugin.mjs', readFileSync(join(WIRE_FIXTURE, 'plugin.mjs')));
  return zip.toBuffer();
}

const say = (text: string) =>
  api(host, 'POST', '/api/console/messages', { conversation: { type: 'group', id: 'g1' }, sender: { id: 'u1' }, text });

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM}: apt-get install chromium (.ci/run does it).`);
  if (!existsSync(ADMIN_INDEX)) throw new Error(`${ADMIN_INDEX} is missing: run "npx nx run admin:build".`);
  if (!existsSync(join(SDK, 'dist/index.mjs'))) throw new Error('libs/plugin-sdk/dist is missing: run "npx nx run plugin-sdk:build".');
  work = mkdtempSync(join(tmpdir(), 'e2e-event-logs-'));
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

it("answers an event's log lines: those its handler wrote with ctx.log, not its stderr nor its onStart line", async () => {
  const installed = await api(host, 'POST', '/api/plugins/packages', packageForm(fixtureZip(), { startAfterInstall: 'true' }));
  expect(installed.status).toBe(201);
  const answered = await say('/forecast Lisbon');
  expect(answered.status).toBe(200);
  expect(answered.body.deliveries).toEqual([expect.objectContaining({ pluginId: FORECAST, accepted: true })]);
  const eventId: string = answered.body.eventId;
  lisbonEventId = eventId;

  // The console answers once the plugin acknowledged; its handler may still be writing. Wait for both lines.
  let body: { eventId: string; plugins: { pluginId: string; kept: boolean; lines: Record<string, unknown>[] }[] } | undefined;
  for (const end = Date.now() + 15_000; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    const res = await api(host, 'GET', `/api/events/${encodeURIComponent(eventId)}/logs`);
    expect(res.status).toBe(200);
    body = res.body;
    if ((body?.plugins[0]?.lines.length ?? 0) >= 2) break;
  }
  expect(body).toEqual({
    eventId,
    plugins: [
      {
        pluginId: FORECAST,
        transport: 'stdio-jsonrpc',
        kept: true,
        truncated: false,
        lines: [
          { at: expect.any(String), stream: 'log', level: 'info', message: 'looking up the forecast', fields: { city: 'Lisbon' }, eventId },
          {
            at: expect.any(String),
            stream: 'log',
            level: 'warn',
            message: 'forecast served from cache',
            fields: { city: 'Lisbon', ageSeconds: 42 },
            eventId,
          },
        ],
      },
    ],
  });
  // The plugin's log has the other lines too, naming no event.
  const tail = (await api(host, 'GET', `/api/plugins/${FORECAST}/logs?tail=50`)).body.lines as { message: string; eventId?: string }[];
  expect(tail.find((l) => l.message === 'forecast plugin ready')).toEqual(expect.not.objectContaining({ eventId: expect.anything() }));
  expect(tail.find((l) => l.message.includes('stderr: forecast asked for Lisbon'))).toEqual(
    expect.not.objectContaining({ eventId: expect.anything() }),
  );
  expect(tail.filter((l) => l.eventId === eventId)).toHaveLength(2);

  const missing = await api(host, 'GET', '/api/events/no-such-event/logs');
  expect({ status: missing.status, code: missing.body.error?.code }).toEqual({ status: 404, code: 'EVENT_NOT_FOUND' });
});

it("keeps a log.write eventId only for an event delivered to that plugin: another plugin's event id is dropped from the line", async () => {
  const installed = await api(host, 'POST', '/api/plugins/packages', packageForm(claimerZip(), { startAfterInstall: 'true' }));
  expect(installed.status).toBe(201);
  const own = await say('/log +event about my own event');
  expect(own.body.deliveries).toContainEqual(expect.objectContaining({ pluginId: CLAIMER, accepted: true }));
  // An event of the forecast plugin only: the claimer was installed after it.
  const claim = await say(`/log event=${lisbonEventId} about the forecast's event`);
  expect(claim.body.deliveries).toContainEqual(expect.objectContaining({ pluginId: CLAIMER, accepted: true }));

  let lines: { message: string; eventId?: string }[] = [];
  for (const end = Date.now() + 15_000; Date.now() < end && lines.length < 2; await new Promise((r) => setTimeout(r, 100)))
    lines = ((await api(host, 'GET', `/api/plugins/${CLAIMER}/logs?tail=50`)).body.lines as typeof lines).filter((l) =>
      l.message.startsWith('about '),
    );
  expect(lines).toEqual([
    expect.objectContaining({ message: 'about my own event', eventId: own.body.eventId }),
    expect.not.objectContaining({ eventId: expect.anything() }),
  ]);
  expect(lines[1]!.message).toBe("about the forecast's event");
  const forecastLogs = (await api(host, 'GET', `/api/events/${encodeURIComponent(lisbonEventId)}/logs`)).body;
  expect(forecastLogs.plugins.map((p: { pluginId: string }) => p.pluginId)).toEqual([FORECAST]);
  expect(JSON.stringify(forecastLogs)).not.toContain('about the');
  const ownLogs = (await api(host, 'GET', `/api/events/${encodeURIComponent(own.body.eventId)}/logs`)).body;
  expect(ownLogs.plugins[0].lines.map((l: { message: string }) => l.message)).toEqual(['about my own event']);
});

it('shows the lines under the delivery of the opened event on the Live events page, in English and Chinese', async () => {
  await page.goto('/');
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
  await page.getByRole('link', { name: 'Live events', exact: true }).click();
  await page.getByRole('heading', { name: 'Live events', level: 1 }).waitFor();

  expect((await say('/forecast Oslo')).status).toBe(200);
  const item = page.locator('li.event-item', { hasText: '/forecast Oslo' });
  await item.waitFor();
  await item.locator('summary').click();
  const lines = item.getByRole('list', { name: `Log lines of ${FORECAST} for this event` });
  await lines.locator('li', { hasText: 'forecast served from cache' }).waitFor({ timeout: 15_000 });
  const texts = await lines.locator('li').allInnerTexts();
  expect(texts).toEqual([
    expect.stringMatching(/^\d{2}:\d{2}:\d{2}.* info looking up the forecast \{"city":"Oslo"\}$/),
    expect.stringMatching(/^\d{2}:\d{2}:\d{2}.* warn forecast served from cache \{"city":"Oslo","ageSeconds":42\}$/),
  ]);
  // Under each plugin's own delivery row: the forecast's lines without its stderr line nor another event's lines;
  // the claimer (which gets every message, and wrote nothing for this one) says it has none.
  const rows = item.locator('tr.event-log-row');
  expect(await rows.count()).toBe(2);
  // A filter's inner locator is matched inside each row, so it starts from the page.
  const linesOfForecast = page.getByRole('list', { name: `Log lines of ${FORECAST} for this event` });
  const forecastRow = rows.filter({ has: linesOfForecast });
  expect(await forecastRow.textContent()).not.toMatch(/stderr|Lisbon|ready/);
  expect(await rows.filter({ hasNot: linesOfForecast }).textContent()).toContain(
    `Log lines of ${CLAIMER} for this eventNo log line names this event.`,
  );
  expect(await item.locator('.event-replies').textContent()).toContain('Sunny in Oslo');
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'event-logs-01-en');

  await page.getByLabel('Language').selectOption('zh');
  await item.getByRole('list', { name: `${FORECAST} 为此事件写的日志` }).waitFor();
  expect(await item.locator('tr.event-log-row').first().textContent()).toContain('forecast served from cache');
  expect(await accessibilityViolations(page)).toEqual([]);
  await screenshot(page, 'event-logs-02-zh');
});
