// The playground in Debian's Chromium against a real host started here, with a real stdio plugin (the rich
// fixture, written against the wire format): /vote is answered with a Markdown keyboard whose buttons show in
// their rows; clicking one sends interaction.created through the console API to the plugin, whose answer (a text
// and an image served from a local server) shows with the image itself; the event menu sends bot.added, which the
// plugin greets, and bot.removed, which takes no reply.
import { ADMIN_TOKEN, api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';
import AdmZip from 'adm-zip';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { accessibilityViolations, CHROMIUM, launchChromium, screenshot } from './browser';

const ROOT = resolve(__dirname, '../../..');
const ADMIN_INDEX = join(ROOT, 'dist/apps/admin/index.html');
const FIXTURE = join(ROOT, 'e2e/test-fixtures/rich-plugin');
// A 1x1 PNG.
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360000000000500010d0a2db40000000049454e44ae426082',
  'hex',
);

let work: string;
let host: RunningHost;
let browser: Browser;
let page: Page;
let files: Server;
let imageUrl: string;
let imageRequests = 0;
const pageErrors: string[] = [];

/** The rich fixture, answering a click with the image of the local server. */
function richZip(): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8'));
  manifest.transport.stdio.args.push(`--image-url=${imageUrl}`);
  const zip = new AdmZip();
  zip.addFile('manifest.json', Buffer.from(JSON.stringify(manifest)));
  zip.addFile('plugin.mjs', readFileSync(join(FIXTURE, 'plugin.mjs')));
  return zip.toBuffer();
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM}: apt-get install chromium (.ci/run does it).`);
  if (!existsSync(ADMIN_INDEX)) throw new Error(`${ADMIN_INDEX} is missing: run "npx nx run admin:build".`);
  files = createServer((req, res) => {
    if (req.url === '/thanks.png') {
      imageRequests++;
      res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    } else res.writeHead(404).end();
  });
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
  imageUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/thanks.png`;
  work = mkdtempSync(join(tmpdir(), 'e2e-playground-rich-'));
  if (!existsSync(join(ROOT, 'dist/apps/host/main.cjs'))) buildHost();
  // The host listens on loopback, so its address policy lets the loopback image server through.
  host = await startHost(join(work, 'data'));
  const installed = await api(host, 'POST', '/api/plugins/packages', packageForm(richZip(), { startAfterInstall: 'true' }));
  expect(installed.status).toBe(201);
  browser = await launchChromium();
  const context = await browser.newContext({ baseURL: host.url, viewport: { width: 1280, height: 900 }, locale: 'en-US' });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    // A Content-Security-Policy refusal (of the plugin's image, say) is reported on the console only.
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) pageErrors.push(m.text());
  });
  await page.goto('/');
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await host?.stop();
  await new Promise((r) => files?.close(r));
  rmSync(work, { recursive: true, force: true });
});

afterEach(() => {
  expect(pageErrors).toEqual([]);
});

it('shows the keyboard of a reply in its rows, and a click brings the plugin its interaction.created and shows the image it answers with', async () => {
  await page.getByRole('link', { name: 'Playground' }).click();
  await page.getByRole('heading', { name: 'Playground' }).waitFor();
  await page.getByLabel('Conversation id').fill('g-rich');
  await page.getByLabel('Your user id').fill('clicker');
  await page.getByLabel('Message').fill('/vote');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  const vote = page.locator('.bubble.bot').first();
  await vote.waitFor();
  expect(await vote.locator('.provider-markdown strong').textContent()).toBe('Vote?');
  const keyboard = vote.getByRole('group', { name: 'Buttons' });
  expect(await keyboard.locator('.keyboard-row').count()).toBe(1);
  expect(await keyboard.locator('.keyboard-row button').allTextContents()).toEqual(['Yes', 'No']);

  await keyboard.getByRole('button', { name: 'Yes' }).click();
  await page.getByText('clicked “Yes”').waitFor();
  const answer = page.locator('.bubble.bot').nth(1);
  await answer.waitFor();
  expect(await answer.locator('.who strong').textContent()).toBe('com.example.rich');
  // The plugin got the button's data and the clicking user, and the image shows as the client would show it.
  expect(await answer.locator('figcaption').textContent()).toBe('clicker chose vote:yes');
  const image = answer.locator('figure.provider-media img');
  expect(await image.getAttribute('src')).toBe(imageUrl);
  await page.waitForFunction(
    (img) => (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth === 1,
    await image.elementHandle(),
  );
  expect(imageRequests).toBeGreaterThan(0);
  await answer.getByText('Raw provider body').click();
  const raw = JSON.parse((await answer.locator('pre.raw').textContent()) ?? '');
  expect(raw).toEqual({
    msg_type: 7,
    content: 'clicker chose vote:yes',
    media: { file_type: 1, url: imageUrl },
    event_id: expect.any(String),
    msg_seq: 1,
  });

  // The event log has the click as the plugin got it.
  const events = await api(host, 'GET', '/api/events?pluginId=com.example.rich&limit=1');
  expect(events.body.events[0].event.chatEvent).toMatchObject({
    eventType: 'interaction.created',
    conversation: { type: 'group', conversationId: 'g-rich' },
    sender: { mentionId: 'clicker' },
    // The click names the message that carried the keyboard, as QQ Bot's does.
    interaction: { data: 'vote:yes', buttonId: 'yes', messageId: expect.stringMatching(/^console-out-\d+$/) },
  });
  await screenshot(page, '08-playground-keyboard');
  expect(await accessibilityViolations(page)).toEqual([]);
});

it("sends the bot's events for the conversation from the menu: bot.added is greeted, bot.removed takes no reply", async () => {
  await page.getByLabel('Bot event').selectOption('bot.added');
  await page.getByRole('button', { name: 'Deliver event' }).click();
  await page.getByText('Bot added to this conversation').last().waitFor();
  await page.getByText('Hello! (bot.added) Send /vote to vote.', { exact: true }).waitFor();

  await page.getByLabel('Bot event').selectOption('bot.removed');
  await page.getByRole('button', { name: 'Deliver event' }).click();
  const removed = page.locator('li.turn').last();
  await removed.getByText('Bot removed from this conversation').waitFor();
  await removed.locator('.meta').waitFor();
  expect(await removed.locator('.meta').textContent()).toMatch(/Delivered to com\.example\.rich \(completed\)/);
  expect(await removed.locator('.bubble.bot').count()).toBe(0);
});
