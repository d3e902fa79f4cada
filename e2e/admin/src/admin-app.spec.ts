// The admin app in Debian's Chromium against a real host started here: the
// operator's whole first session, from sign-in to sign-out, through the UI
// only. Every page passes an axe-core accessibility check, and a plugin whose
// texts and log lines carry markup cannot run script in the page.
import { ADMIN_TOKEN, api, buildHost, startHost, type RunningHost } from '@host/e2e-support';
import { WebhookSigner } from '@host/host-qqbot/testing';
import AdmZip from 'adm-zip';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { accessibilityViolations, CHROMIUM, launchChromium, screenshot } from './browser';

const ROOT = resolve(__dirname, '../../..');
const ECHO_ZIP = join(ROOT, 'examples/echo-plugin/artifacts/com.example.echo.zip');
const ADMIN_INDEX = join(ROOT, 'dist/apps/admin/index.html');
const MISBEHAVING = join(ROOT, 'e2e/test-fixtures/misbehaving-plugin/plugin.mjs');
const BARE_HTTP = join(ROOT, 'e2e/test-fixtures/http-plugin-bare/server.mjs');

let work: string;
let host: RunningHost;
let httpPlugin: ChildProcess;
let httpUrl: string;
let secretFile: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];

/** The packed echo plugin with another version in its manifest. */
function echoZip(version: string): string {
  const zip = new AdmZip(ECHO_ZIP);
  const manifest = JSON.parse(zip.readAsText('manifest.json'));
  manifest.version = version;
  zip.updateFile('manifest.json', Buffer.from(JSON.stringify(manifest, null, 2)));
  const file = join(work, `com.example.echo-${version}.zip`);
  zip.writeZip(file);
  return file;
}

/** The wire-format fixture plugin under a manifest full of markup. */
function xssZip(): string {
  const zip = new AdmZip();
  zip.addFile('manifest.json', readFileSync(join(__dirname, '../test-fixtures/xss-manifest.json')));
  zip.addFile('plugin.mjs', readFileSync(MISBEHAVING));
  const file = join(work, 'com.example.xss.zip');
  zip.writeZip(file);
  return file;
}

async function expectAccessible(name: string): Promise<void> {
  expect({ page: name, violations: await accessibilityViolations(page) }).toEqual({ page: name, violations: [] });
}

/** No script a plugin supplied ran: the payloads all set window.__xss. */
async function expectNoInjectedScript(): Promise<void> {
  expect(await page.evaluate(() => (window as unknown as { __xss?: string }).__xss)).toBeUndefined();
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM}: apt-get install chromium (.ci/run does it).`);
  if (!existsSync(ECHO_ZIP)) throw new Error(`${ECHO_ZIP} is missing: run "npx nx run echo-plugin:pack" (the test target depends on it).`);
  if (!existsSync(ADMIN_INDEX)) throw new Error(`${ADMIN_INDEX} is missing: run "npx nx run admin:build".`);
  work = mkdtempSync(join(tmpdir(), 'e2e-admin-'));
  if (!existsSync(join(ROOT, 'dist/apps/host/main.cjs'))) buildHost();
  host = await startHost(join(work, 'data'));
  secretFile = join(work, 'http-plugin.secret');
  httpPlugin = spawn(process.execPath, [BARE_HTTP, '--port', '0', '--secret-file', secretFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  httpUrl = await new Promise<string>((ok, fail) => {
    let out = '';
    httpPlugin.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /"listening":"([^"]+)"/.exec(out);
      if (m) ok(m[1]!);
    });
    httpPlugin.once('exit', () => fail(new Error(`the HTTP plugin exited: ${out}`)));
  });
  browser = await launchChromium();
  // An English-speaking browser: the app follows navigator.languages (admin-languages.spec.ts covers Chinese).
  context = await browser.newContext({ baseURL: host.url, viewport: { width: 1280, height: 900 }, locale: 'en-US' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: host.url });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  // A violation the page's own code catches (an eval probe in a try) logs no error of its own: report every one.
  await page.exposeFunction('reportCspViolation', (text: string) => pageErrors.push(text));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const report = (window as unknown as { reportCspViolation: (t: string) => void }).reportCspViolation;
      void report(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline code'} at ${e.sourceFile}:${e.lineNumber}`);
    });
  });
  // The app itself must live within its Content-Security-Policy (no inline script or style it would need).
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) pageErrors.push(m.text());
  });
  page.on('dialog', (d) => {
    // An alert() would be a script a plugin managed to run.
    pageErrors.push(`unexpected ${d.type()} dialog: ${d.message()}`);
    void d.dismiss();
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  httpPlugin?.kill();
  await host?.stop();
  rmSync(work, { recursive: true, force: true });
});

afterEach(() => {
  expect(pageErrors).toEqual([]);
});

it('a wrong token is refused with the reason; the right one signs in with an HttpOnly cookie the page cannot read', async () => {
  await page.goto('/');
  await page.getByRole('heading', { name: 'Sign in to the plugin host' }).waitFor();
  await expectAccessible('sign-in');
  await page.getByLabel('Admin token').fill('not-the-admin-token-0000');
  await page.getByRole('button', { name: 'Sign in' }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor();
  expect(await alert.textContent()).toContain('SESSION_TOKEN_INVALID');
  await screenshot(page, '01-sign-in-wrong-token');
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // The dashboard is the first screen; the plugins tab is one link away.
  await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
  await page.getByRole('link', { name: 'v2 plugins', exact: true }).click();
  await page.getByRole('heading', { name: 'v2 plugins' }).waitFor();
  const health = (await api(host, 'GET', '/api/health')).body;
  await page.getByText(`Host ${health.version} · protocol v${health.protocolVersion} · SDK ${health.sdkVersion}`).waitFor();
  const [cookie] = await context.cookies();
  expect(cookie).toMatchObject({ name: 'host_admin_session', httpOnly: true, sameSite: 'Strict', path: '/api' });
  expect(await page.evaluate(() => document.cookie)).toBe('');
  expect(await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }))).not.toContain(ADMIN_TOKEN);
  await expectAccessible('plugins (empty)');
});

it('installs the packed echo plugin through the upload form with a progress bar, and starts it', async () => {
  // Record every value the progress bar shows, however fast the upload is.
  await page.evaluate(() => {
    const seen: number[] = [];
    (window as unknown as { __progress: number[] }).__progress = seen;
    new MutationObserver(() => {
      const p = document.querySelector('progress');
      if (p) seen.push(Number(p.value));
    }).observe(document.body, { subtree: true, childList: true, attributes: true });
  });
  await page.locator('input[type=file]').setInputFiles(echoZip('1.0.0'));
  expect(await page.getByLabel('Start after install').isChecked()).toBe(true);
  await page.getByRole('button', { name: 'Upload and install' }).click();
  await page.getByText('Installed Echo 1.0.0 (com.example.echo) and started it.').waitFor();
  expect((await page.evaluate(() => (window as unknown as { __progress: number[] }).__progress)).length).toBeGreaterThan(0);
  const card = page.locator('li[data-plugin-id="com.example.echo"]');
  await card.getByText('Running', { exact: true }).waitFor();
  await card.getByText('Permissions (1) and commands (1)').click();
  expect(await card.textContent()).toContain('messages.reply: Reply to the messages the plugin receives.');
  await screenshot(page, '02-installed');
  await expectAccessible('plugins (installed)');
});

it('an upload of an installed id opens the side-by-side dialog; cancel keeps 1.0.0, confirm runs 1.1.0', async () => {
  const v2 = echoZip('1.1.0');
  await page.locator('input[type=file]').setInputFiles(v2);
  await page.getByRole('button', { name: 'Upload and install' }).click();
  const dialog = page.getByRole('dialog', { name: 'Update com.example.echo?' });
  await dialog.waitFor();
  const versionRow = dialog.getByRole('row', { name: /Version/ });
  expect(await versionRow.textContent()).toMatch(/1\.0\.0.*1\.1\.0/);
  expect(await dialog.textContent()).toContain('Its data and settings are kept');
  await screenshot(page, '03-update-dialog');
  await expectAccessible('update dialog');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await page.getByText('The update of com.example.echo was cancelled; the installed version is unchanged.').waitFor();
  expect((await api(host, 'GET', '/api/plugins/com.example.echo')).body.plugin.version).toBe('1.0.0');

  await page.locator('input[type=file]').setInputFiles(v2);
  await page.getByRole('button', { name: 'Upload and install' }).click();
  await dialog.waitFor();
  await dialog.getByRole('button', { name: 'Replace 1.0.0 with 1.1.0' }).click();
  await page.getByText(/Updated Echo 1\.1\.0 \(com\.example\.echo\)/).waitFor();
  const card = page.locator('li[data-plugin-id="com.example.echo"]');
  await card.getByText('Running', { exact: true }).waitFor();
  expect(await card.textContent()).toContain('1.1.0');
});

it('a stopped plugin is started from its card', async () => {
  const card = page.locator('li[data-plugin-id="com.example.echo"]');
  await card.getByRole('button', { name: 'Stop' }).click();
  await card.getByText('Stopped', { exact: true }).waitFor();
  await card.getByRole('button', { name: 'Start' }).click();
  await card.getByText('Running', { exact: true }).waitFor();
});

it("the plugin's page says how its process is isolated, as the runtime reports it", async () => {
  const runtime = (await api(host, 'GET', '/api/plugins/com.example.echo')).body.plugin.runtime;
  const summary: string = runtime.isolation.summary;
  // As root with bubblewrap (CI), the default mode is the sandbox, under a uid of the plugin's own.
  if (process.getuid?.() === 0 && existsSync('/usr/bin/bwrap'))
    expect(summary).toMatch(/^sandbox \(uid \d+\), network any, limits through /);
  await page.locator('li[data-plugin-id="com.example.echo"]').getByRole('link').click();
  await page.getByRole('heading', { level: 1, name: 'Echo' }).waitFor();
  const fact = page
    .locator('section[aria-labelledby="runtime-title"] dl div')
    .filter({ has: page.getByText('Isolation', { exact: true }) });
  expect(await fact.locator('dd').textContent()).toBe(summary);
  await page.getByRole('link', { name: '← v2 plugins' }).click();
});

it('the playground shows the reply as QQ Bot would: Markdown, the mention as a chip, user text as text, the raw body on demand', async () => {
  await page.getByRole('link', { name: 'Playground' }).click();
  await page.getByRole('heading', { name: 'Playground' }).waitFor();
  await page.getByLabel('Display name').fill('Alice');
  await page.getByLabel('Message').fill('/echo hello <b>bold?</b>');
  await page.getByRole('button', { name: 'Send' }).click();
  const reply = page.locator('.bubble.bot').first();
  await reply.waitFor();
  expect(await reply.locator('.who').textContent()).toMatch(/com\.example\.echo · handled in \d+ ms/);
  const chip = reply.locator('.mention');
  // The chip names the member as the client would; the id is kept on it.
  expect(await chip.textContent()).toBe('@Alice');
  expect(await chip.getAttribute('data-mention')).toBe('user-1');
  expect(await reply.locator('.provider-markdown').textContent()).toContain('said: hello <b>bold?</b>');
  expect(await reply.locator('.provider-markdown b').count()).toBe(0);
  expect(await reply.locator('.provider-markdown strong').count()).toBe(1);
  await reply.getByText('Raw provider body').click();
  expect(await reply.locator('pre.raw').textContent()).toContain('<qqbot-at-user id=\\"user-1\\" />');
  // One-to-one: the plugin answers in text, which takes no mentions.
  await page.getByLabel('Type').selectOption('c2c');
  await page.getByLabel('Message').fill('/echo just us');
  await page.getByRole('button', { name: 'Send' }).click();
  const direct = page.locator('.bubble.bot').nth(1);
  await direct.waitFor();
  expect(await direct.locator('.provider-text').textContent()).toBe('You said: just us');
  expect(await direct.locator('.mention').count()).toBe(0);
  await screenshot(page, '04-playground');
  await expectAccessible('playground');
});

it('the QQ Bot tab adds an account, shows its webhook URL to register, with a copy button, and its last event', async () => {
  await page.getByRole('link', { name: 'QQ Bot' }).click();
  await page.getByText('No QQ Bot account is configured').waitFor();
  const panel = page.locator('section', { has: page.getByRole('heading', { name: 'Add QQ Bot account' }) });
  await panel.getByLabel('Account id (ends the webhook URL)').fill('main-bot');
  await panel.getByLabel('AppID').fill('11111111');
  await panel.getByLabel('AppSecret').fill('DG5g3B4j9X2KOErG');
  await panel.getByLabel('Display name (optional)').fill('Main bot');
  await panel.getByRole('button', { name: 'Add account' }).click();
  const status = panel.getByRole('status');
  await status.getByText(/Added Main bot/).waitFor();
  const url = (await status.locator('code').textContent())!;
  expect(url).toMatch(/\/api\/qqbot\/webhook\/main-bot$/);
  // The form forgot the secret once the host took it.
  expect(await panel.getByLabel('AppSecret').inputValue()).toBe('');
  const listed = await api(host, 'GET', '/api/qqbot/accounts');
  expect(listed.body.accounts).toEqual([expect.objectContaining({ id: 'main-bot', appId: '11111111', source: 'api', webhookUrl: url })]);
  const card = page.getByRole('listitem', { name: 'QQ Bot account main-bot' });
  await card.waitFor({ timeout: 15_000 });
  await card.getByText(url, { exact: true }).waitFor();
  await card.getByText(/none yet/).waitFor();
  // The platform validates the callback URL (op 13, signed like its other requests): the card shows it as the last event.
  const signer = new WebhookSigner({ appId: '11111111', secret: 'DG5g3B4j9X2KOErG', webhookUrl: url });
  try {
    const validation = await signer.post({ op: 13, d: { plain_token: 'Arq0D5A61EgUu4OxUvOp', event_ts: '1725442341' } });
    expect(validation.status).toBe(200);
  } finally {
    await signer.close();
  }
  await card.getByText(/callback URL validated/).waitFor({ timeout: 15_000 });
  // The secret is never shown.
  expect(await page.content()).not.toContain('DG5g3B4j9X2KOErG');
  await card.getByRole('button', { name: 'Copy webhook URL' }).click();
  await card.getByRole('button', { name: 'Copied' }).waitFor();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);
  await expectAccessible('qqbot');
  await screenshot(page, 'qqbot');
  // What the host refuses is shown in words: a second account with the same app id, a secret too short.
  await panel.getByLabel('Account id (ends the webhook URL)').fill('second');
  await panel.getByLabel('AppID').fill('11111111');
  await panel.getByLabel('AppSecret').fill('another-secret-1');
  await panel.getByRole('button', { name: 'Add account' }).click();
  expect(await panel.getByRole('alert').textContent()).toContain('QQBOT_ACCOUNT_EXISTS');
  await panel.getByLabel('AppID').fill('22222222');
  await panel.getByLabel('AppSecret').fill('short');
  await panel.getByRole('button', { name: 'Add account' }).click();
  await panel.getByRole('alert').getByText('BAD_REQUEST').waitFor();
  expect(await panel.getByRole('alert').textContent()).toContain('secret');
  expect(await page.content()).not.toContain('another-secret-1');
});

it('removes a QQ Bot account only after the confirmation dialog; its webhook answers 404 then', async () => {
  const card = page.getByRole('listitem', { name: 'QQ Bot account main-bot' });
  const url = (await card.locator('dd code').first().textContent())!;
  await card.getByRole('button', { name: 'Remove account' }).click();
  const dialog = page.getByRole('dialog', { name: 'Remove QQ Bot account main-bot?' });
  await dialog.waitFor();
  await expectAccessible('qqbot removal dialog');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'hidden' });
  expect((await api(host, 'GET', '/api/qqbot/accounts')).body.accounts).toHaveLength(1);
  await card.getByRole('button', { name: 'Remove account' }).click();
  await dialog.getByRole('button', { name: 'Remove main-bot' }).click();
  await card.waitFor({ state: 'detached' });
  await page.getByText('No QQ Bot account is configured').waitFor();
  expect((await api(host, 'GET', '/api/qqbot/accounts')).body.accounts).toEqual([]);
  const webhook = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"op":13,"d":{}}' });
  expect(webhook.status).toBe(404);
  await page.getByRole('link', { name: 'v2 plugins' }).click();
});

it('registers the HTTP plugin: the fetched manifest, the signing secret once with a copy button, then enabled', async () => {
  await page.getByRole('link', { name: 'v2 plugins', exact: true }).click();
  await page.getByLabel('Base URL of the plugin service').fill(httpUrl);
  await page.getByRole('button', { name: 'Fetch manifest and register' }).click();
  const panel = page.locator('section', { has: page.getByRole('heading', { name: 'Register HTTP plugin' }) });
  await panel.getByText(/Registered Bare echo 1\.0\.0 \(com\.example\.bare-echo\)/).waitFor();
  const secret = (await panel.getByLabel('Signing secret', { exact: true }).textContent()) ?? '';
  expect(secret.length).toBeGreaterThan(20);
  await panel.getByRole('button', { name: 'Copy secret' }).click();
  await panel.getByRole('button', { name: 'Copied' }).waitFor();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
  writeFileSync(secretFile, secret);
  await screenshot(page, '05-http-registered');
  await expectAccessible('HTTP registration');
  await panel.getByRole('button', { name: 'Enable delivery' }).click();
  await panel.getByText('Delivery is enabled').waitFor();
  const card = page.locator('li[data-plugin-id="com.example.bare-echo"]');
  await card.getByText(/HTTP (healthy|degraded|unreachable)/).waitFor();
  // The registration form refuses what the host refuses, in words.
  await page.getByLabel('Base URL of the plugin service').fill('http://169.254.169.254');
  await page.getByRole('button', { name: 'Fetch manifest and register' }).click();
  expect(await panel.getByRole('alert').textContent()).toContain('REGISTRATION_ADDRESS_REFUSED');
});

it('refreshes an HTTP plugin: a new version is shown, one asking for more waits for confirmation', async () => {
  const manifestFile = join(work, 'refresh-manifest.json');
  const manifest = {
    pluginId: 'com.example.deployed',
    name: 'Deployed service',
    version: '1.0.0',
    author: 'Example',
    protocolVersion: 2,
    capabilities: 9,
    eventSubscriptions: [{ eventType: 'message.created' }],
    permissions: ['messages.reply'],
  };
  writeFileSync(manifestFile, JSON.stringify(manifest));
  const server = spawn(process.execPath, [join(__dirname, '../test-fixtures/manifest-server.mjs'), manifestFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const url = await new Promise<string>((ok) =>
      server.stdout!.on('data', (d: Buffer) => {
        const m = /"listening":"([^"]+)"/.exec(d.toString());
        if (m) ok(m[1]!);
      }),
    );
    await page.getByLabel('Base URL of the plugin service').fill(url);
    await page.getByRole('button', { name: 'Fetch manifest and register' }).click();
    await page.getByText(/Registered Deployed service 1\.0\.0/).waitFor();
    const card = page.locator('li[data-plugin-id="com.example.deployed"]');
    writeFileSync(manifestFile, JSON.stringify({ ...manifest, version: '1.1.0' }));
    await card.getByRole('button', { name: 'Refresh manifest' }).click();
    await card.getByText('Manifest refreshed: version 1.0.0 → 1.1.0.').waitFor();
    writeFileSync(
      manifestFile,
      JSON.stringify({ ...manifest, version: '1.2.0', capabilities: 11, permissions: ['messages.reply', 'messages.send'] }),
    );
    await card.getByRole('button', { name: 'Refresh manifest' }).click();
    const dialog = page.getByRole('dialog', { name: 'Accept the new manifest of com.example.deployed?' });
    await dialog.waitFor();
    // Each added permission with what it allows.
    expect(await dialog.textContent()).toContain(
      'It asks for these permissions it did not have:messages.send: Send messages to a group, channel or user on its own initiative.',
    );
    await expectAccessible('refresh confirmation');
    await dialog.getByRole('button', { name: 'Accept version 1.2.0' }).click();
    await card.getByText('Manifest refreshed: version 1.1.0 → 1.2.0.').waitFor();
    expect((await api(host, 'GET', '/api/plugins/com.example.deployed')).body.plugin.version).toBe('1.2.0');
    await card.getByRole('button', { name: 'Unregister' }).click();
    await page.getByRole('dialog', { name: 'Unregister com.example.deployed?' }).getByRole('button', { name: 'Unregister' }).click();
    await card.waitFor({ state: 'detached' });
  } finally {
    server.kill();
  }
});

it('a plugin whose name, texts and log lines carry markup shows them as text; its settings save with per-field errors; a log line arrives', async () => {
  await page.locator('input[type=file]').setInputFiles(xssZip());
  await page.getByRole('button', { name: 'Upload and install' }).click();
  await page.getByText(/Installed .* \(com\.example\.xss\) and started it\./).waitFor();
  const card = page.locator('li[data-plugin-id="com.example.xss"]');
  await card.getByRole('link').click();
  // The list's own heading is an h1 too: wait for the detail page's, not for whichever is there first.
  const h1 = page.getByRole('heading', { level: 1 }).filter({ hasText: "window.__xss='name'" });
  await h1.waitFor();
  expect(await h1.textContent()).toBe(`<img src=x onerror="window.__xss='name'"> <script>window.__xss='name-script'</script>`);
  expect(await page.locator('main img').count()).toBe(0);
  expect(await page.locator('main script').count()).toBe(0);

  // Settings: the server's validation lands on the field.
  await page.getByLabel('Retries').fill('9');
  await page.getByLabel('API key').fill('s3cret-value');
  await page.getByLabel('Mode').selectOption('fast');
  await page.getByLabel('Verbose logging').check();
  await page.getByRole('button', { name: 'Save settings' }).click();
  const retriesError = page.locator('.field-number .field-error');
  await retriesError.waitFor();
  expect(await retriesError.textContent()).toMatch(/retries/i);
  await page.getByLabel('Retries').fill('3');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText(/^Saved\./).waitFor();
  // The secret is never shown again; blank keeps it.
  expect(await page.getByLabel('API key').inputValue()).toBe('');
  expect(await page.getByLabel('API key').getAttribute('placeholder')).toBe('A secret is stored; leave blank to keep it');
  const stored = await api(host, 'GET', '/api/plugins/com.example.xss/settings');
  expect(stored.body.values).toMatchObject({ retries: 3, mode: 'fast', verbose: true, apiKey: { set: true } });

  // A log line with markup arrives while the page watches.
  const payload = `<script>window.__xss='log'</script><img src=x onerror="window.__xss='log-img'">`;
  const sent = await api(host, 'POST', '/api/console/messages', {
    conversation: { type: 'group', id: 'g1' },
    sender: { id: 'u1' },
    text: `/log ${payload}`,
  });
  expect(sent.status).toBe(200);
  await page.getByText('Following new lines as they are written.').waitFor();
  const line = page.locator('.log-line', { hasText: "window.__xss='log'" });
  await line.waitFor({ timeout: 10_000 });
  expect(await line.locator('.log-message').textContent()).toBe(payload);
  await page.getByLabel('Search').fill('no such text anywhere');
  await page.getByText('No line matches.').waitFor();
  await page.getByLabel('Search').fill('');
  await page.getByText('Recent deliveries').scrollIntoViewIfNeeded();
  await page.locator('td', { hasText: '/log' }).first().waitFor();
  await expectNoInjectedScript();
  await screenshot(page, '06-plugin-detail-xss');
  await expectAccessible('plugin detail');
  // The plugins tab shows its name, permissions and commands as text too.
  await page.getByRole('link', { name: 'v2 plugins', exact: true }).click();
  await page.locator('li[data-plugin-id="com.example.xss"]').getByText('Permissions (1) and commands (1)').click();
  expect(await page.locator('main img').count()).toBe(0);
  await expectNoInjectedScript();
});

it('a file that is no plugin package is refused with the catalogue code, the reason and the fix', async () => {
  const bogus = join(work, 'not-a-plugin.zip');
  writeFileSync(bogus, 'this is not a zip archive');
  await page.getByRole('link', { name: 'v2 plugins', exact: true }).click();
  await page.locator('input[type=file]').setInputFiles(bogus);
  await page.getByRole('button', { name: 'Upload and install' }).click();
  const alert = page.locator('section', { has: page.getByRole('heading', { name: 'Install a plugin package (ZIP)' }) }).getByRole('alert');
  await alert.waitFor();
  const text = (await alert.textContent()) ?? '';
  expect(text).toContain('Not installed');
  expect(text).toContain('INSTALL_NOT_A_ZIP');
  await screenshot(page, '07-install-refused');
});

it("deletes a plugin's data only after its id is typed and the plugin is stopped, then uninstalls it", async () => {
  const card = page.locator('li[data-plugin-id="com.example.xss"]');
  const dialog = page.getByRole('dialog', { name: 'Delete the data of com.example.xss?' });
  const typed = dialog.getByLabel('Type com.example.xss to confirm');
  const remove = dialog.getByRole('button', { name: 'Delete data' });
  await page.getByRole('link', { name: 'v2 plugins', exact: true }).click();
  await card.getByRole('button', { name: 'Delete data…' }).click();
  await dialog.waitFor();
  expect(await remove.isDisabled()).toBe(true);
  await typed.fill('com.example.xs');
  expect(await remove.isDisabled()).toBe(true);
  await typed.fill('com.example.xss');
  await remove.click();
  // A running plugin's data is not deleted: the dialog says why.
  await dialog.getByRole('alert').waitFor();
  expect(await dialog.getByRole('alert').textContent()).toContain('PLUGIN_STATE_CONFLICT');
  await expectAccessible('delete data dialog');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  expect((await api(host, 'GET', '/api/plugins/com.example.xss/settings')).body.values.apiKey).toEqual({ set: true });

  await card.getByRole('button', { name: 'Stop' }).click();
  await card.getByText('Stopped', { exact: true }).waitFor();
  await card.getByRole('button', { name: 'Delete data…' }).click();
  await typed.fill('com.example.xss');
  await remove.click();
  await card.getByText('Deleted the data, settings and cache of com.example.xss.').waitFor();
  expect((await api(host, 'GET', '/api/plugins/com.example.xss/settings')).body.values.apiKey).toEqual({ set: false });

  await card.getByRole('button', { name: 'Uninstall' }).click();
  await page.getByRole('dialog', { name: 'Uninstall com.example.xss?' }).getByRole('button', { name: 'Uninstall' }).click();
  await card.waitFor({ state: 'detached' });
  expect((await api(host, 'GET', '/api/plugins/com.example.xss')).status).toBe(404);
});

it('is usable on a narrow screen: nothing overflows sideways', async () => {
  await page.getByRole('link', { name: 'v2 plugins', exact: true }).click();
  await page.setViewportSize({ width: 390, height: 844 });
  await page.getByRole('heading', { name: 'v2 plugins' }).waitFor();
  // The elements that reach past the right edge, if any, by tag and class.
  const overflowing = await page.evaluate(() =>
    [...document.querySelectorAll('body *')]
      .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5)
      .map((e) => `${e.tagName.toLowerCase()}.${e.className} (${Math.round(e.getBoundingClientRect().right)} px)`),
  );
  expect(overflowing).toEqual([]);
  expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
  await screenshot(page, '08-narrow');
  await page.setViewportSize({ width: 1280, height: 900 });
});

it('signs out: the page asks for the token again and the old cookie answers SESSION_EXPIRED', async () => {
  const [cookie] = await context.cookies();
  // A second tab of the same session, on the plugins tab (which reads the list every few seconds).
  const other = await context.newPage();
  await other.goto('/plugins');
  await other.getByRole('heading', { name: 'v2 plugins' }).waitFor();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to the plugin host' }).waitFor();
  await page.getByText('You signed out.').waitFor();
  await screenshot(page, '09-signed-out');
  // The other tab finds the session ended at its next request and says so.
  await other.getByRole('heading', { name: 'Sign in to the plugin host' }).waitFor({ timeout: 15_000 });
  expect(await other.getByRole('status').textContent()).toContain('Your session has ended: you signed out in another tab');
  await other.close();
  const res = await fetch(`${host.url}/api/plugins`, { headers: { cookie: `${cookie!.name}=${cookie!.value}` } });
  expect(res.status).toBe(401);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe('SESSION_EXPIRED');
});
