// The admin app in Chinese and English, in Debian's Chromium against a real
// host: a browser that prefers Chinese gets every page in Chinese, the switch
// turns it to English and the choice outlives a reload; each page passes the
// accessibility check in both languages, with screenshots of each kept as
// artifacts. Then the fixes of an operator's walk-through, each with real
// plugins: a refused settings change, the manifest's field order, the
// playground's history and raw body, the HTTP registration's signing secret,
// the place of the install panels, an HTTP plugin's empty log, the meaning
// of added permissions in the update dialog, and a restore of a backup.
import { ADMIN_TOKEN, api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';
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
const BARE_HTTP = join(ROOT, 'e2e/test-fixtures/http-plugin-bare/server.mjs');
const WEATHER = 'com.example.weather';

let work: string;
let host: RunningHost;
let httpPlugin: ChildProcess;
let httpUrl: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];

/** The packed echo plugin with another version (and, optionally, more permissions) in its manifest. */
function echoZip(version: string, permissions?: string[]): Buffer {
  const zip = new AdmZip(ECHO_ZIP);
  const manifest = JSON.parse(zip.readAsText('manifest.json'));
  manifest.version = version;
  if (permissions) manifest.permissions = permissions;
  zip.updateFile('manifest.json', Buffer.from(JSON.stringify(manifest, null, 2)));
  return zip.toBuffer();
}

/** The weather fixture on the echo package's copy of the Node SDK. */
function weatherZip(): Buffer {
  const zip = new AdmZip(ECHO_ZIP);
  for (const e of zip.getEntries().filter((e) => e.entryName.startsWith('dist/'))) zip.deleteFile(e.entryName);
  zip.updateFile('manifest.json', readFileSync(join(__dirname, '../test-fixtures/weather-manifest.json')));
  zip.addFile('dist/weather.js', readFileSync(join(__dirname, '../test-fixtures/weather-plugin.cjs')));
  return zip.toBuffer();
}

async function expectAccessible(name: string): Promise<void> {
  expect({ page: name, violations: await accessibilityViolations(page) }).toEqual({ page: name, violations: [] });
}

async function waitForRunning(pluginId: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await api(host, 'GET', `/api/plugins/${pluginId}`)).body.plugin?.state === 'running') return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${pluginId} did not reach running`);
}

/** Every text of the page's main part, for checks of the language it is written in. */
const mainText = () => page.locator('main').innerText();
const HAN = /[\u4e00-\u9fff]/;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM}: apt-get install chromium (.ci/run does it).`);
  if (!existsSync(ECHO_ZIP)) throw new Error(`${ECHO_ZIP} is missing: run "npx nx run echo-plugin:pack" (the test target depends on it).`);
  if (!existsSync(ADMIN_INDEX)) throw new Error(`${ADMIN_INDEX} is missing: run "npx nx run admin:build".`);
  work = mkdtempSync(join(tmpdir(), 'e2e-admin-lang-'));
  if (!existsSync(join(ROOT, 'dist/apps/host/main.cjs'))) buildHost();
  host = await startHost(join(work, 'data'));
  httpPlugin = spawn(process.execPath, [BARE_HTTP, '--port', '0', '--secret-file', join(work, 'http.secret')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  httpUrl = await new Promise<string>((ok, fail) => {
    let out = '';
    httpPlugin.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /"listening":"([^"]+)"/.exec(out);
      if (m) ok(m[1]!);
    });
    httpPlugin.once('exit', () => fail(new Error(`the HTTP plugin exited: ${out}`)));
  });
  expect((await api(host, 'POST', '/api/plugins/packages', packageForm(echoZip('1.0.0'), { startAfterInstall: 'true' }))).status).toBe(201);
  expect((await api(host, 'POST', '/api/plugins/packages', packageForm(weatherZip(), { startAfterInstall: 'true' }))).status).toBe(201);
  await waitForRunning('com.example.echo');
  await waitForRunning(WEATHER);
  browser = await launchChromium();
  // A browser that prefers Chinese (navigator.languages and Accept-Language).
  context = await browser.newContext({ baseURL: host.url, viewport: { width: 1280, height: 900 }, locale: 'zh-CN' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: host.url });
  page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  // Loading a language's texts on demand must stay within the host's Content-Security-Policy too.
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) pageErrors.push(m.text());
  });
  await page.exposeFunction('reportCspViolation', (text: string) => pageErrors.push(text));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const report = (window as unknown as { reportCspViolation: (t: string) => void }).reportCspViolation;
      void report(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline code'} at ${e.sourceFile}:${e.lineNumber}`);
    });
  });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  httpPlugin?.kill();
  await host?.stop();
  rmSync(work, { recursive: true, force: true });
});

afterEach(() => {
  expect(pageErrors).toEqual([]);
});

it('opens in Chinese for a browser that prefers it: every page, its dates, and the errors with their codes', async () => {
  expect(await page.evaluate(() => navigator.languages)).toEqual(['zh-CN']);
  await page.goto('/');
  await page.getByRole('heading', { name: '登录插件主机' }).waitFor();
  expect(await page.evaluate(() => document.documentElement.lang)).toBe('zh-CN');
  await page.getByLabel('管理令牌').fill('not-the-admin-token-0000');
  await page.getByRole('button', { name: '登录', exact: true }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor();
  // The code as it is, the app's Chinese sentence for it.
  expect(await alert.textContent()).toContain('SESSION_TOKEN_INVALID');
  expect(await alert.textContent()).toContain('这不是本主机接受的管理令牌');
  await expectAccessible('zh: sign-in');
  await screenshot(page, 'zh-01-sign-in');
  await page.getByLabel('管理令牌').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: '登录', exact: true }).click();
  await page.getByRole('heading', { name: '仪表盘', level: 1 }).waitFor();
  await expectAccessible('zh: dashboard');
  await page.getByRole('link', { name: 'v2 插件', exact: true }).click();

  await page.getByRole('heading', { name: 'v2 插件', level: 1 }).waitFor();
  await page.getByRole('heading', { name: '安装插件包（ZIP）' }).waitFor();
  await page.locator('li[data-plugin-id="com.example.echo"]').getByText('运行中').waitFor();
  expect(await page.getByRole('navigation').innerText()).toMatch(/仪表盘\s+v2 插件\s+实时事件\s+对话调试\s+QQ 机器人/);
  await expectAccessible('zh: plugins');
  await screenshot(page, 'zh-02-plugins');

  await page.getByRole('link', { name: 'Echo' }).click();
  await page.getByRole('heading', { name: '运行情况' }).waitFor();
  // A date as Chinese readers write it (Intl in zh-CN): "2026年3月5日 14:07:09".
  const started = page.locator('dt', { hasText: '启动时间' }).locator('xpath=following-sibling::dd');
  expect(await started.innerText()).toMatch(/^\d{4}年\d{1,2}月\d{1,2}日 \d{1,2}:\d{2}:\d{2}$/);
  await page.getByRole('heading', { name: '最近的投递' }).waitFor();
  await expectAccessible('zh: plugin detail');
  await screenshot(page, 'zh-03-plugin-detail');

  await page.getByRole('link', { name: '对话调试' }).click();
  await page.getByRole('heading', { name: '对话调试' }).waitFor();
  await page.getByLabel('消息').fill('/echo hello');
  await page.getByRole('button', { name: '发送' }).click();
  await page.getByText(/已投递给 com\.example\.echo \(已完成\)/).waitFor();
  await expectAccessible('zh: playground');
  await screenshot(page, 'zh-04-playground');

  await page.getByRole('link', { name: 'QQ 机器人' }).click();
  await page.getByRole('heading', { name: 'QQ 机器人账号', exact: true }).waitFor();
  await page.getByText('还没有配置 QQ 机器人账号').waitFor();
  await expectAccessible('zh: QQ Bot');
  await screenshot(page, 'zh-05-qqbot');
  expect(await mainText()).toMatch(HAN);
});

it('switches to English from the header and keeps the choice across a reload', async () => {
  await page.getByRole('link', { name: 'v2 插件', exact: true }).click();
  await page.getByLabel('语言').selectOption('en');
  await page.getByRole('heading', { name: 'v2 plugins', level: 1 }).waitFor();
  expect(await page.evaluate(() => [document.documentElement.lang, localStorage.getItem('host-admin.language')])).toEqual(['en', 'en']);
  await page.reload();
  await page.getByRole('heading', { name: 'Install a plugin package (ZIP)' }).waitFor();
  expect(await mainText()).not.toMatch(HAN);
  await expectAccessible('en: plugins');
  await screenshot(page, 'en-02-plugins');

  await page.getByRole('link', { name: 'Echo' }).click();
  await page.getByRole('heading', { name: 'Runtime' }).waitFor();
  const started = page.locator('dt', { hasText: 'Started' }).locator('xpath=following-sibling::dd');
  expect(await started.innerText()).toMatch(/^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}:\d{2}\s[AP]M$/);
  expect(await mainText()).not.toMatch(HAN);
  await expectAccessible('en: plugin detail');
  await screenshot(page, 'en-03-plugin-detail');

  await page.getByRole('link', { name: 'Playground' }).click();
  await page.getByRole('heading', { name: 'Playground' }).waitFor();
  expect(await mainText()).not.toMatch(HAN);
  await expectAccessible('en: playground');
  await screenshot(page, 'en-04-playground');

  await page.getByRole('link', { name: 'QQ Bot' }).click();
  await page.getByRole('heading', { name: 'QQ Bot accounts', exact: true }).waitFor();
  expect(await mainText()).not.toMatch(HAN);
  await expectAccessible('en: QQ Bot');
  await screenshot(page, 'en-05-qqbot');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to the plugin host' }).waitFor();
  await page.getByText('You signed out.').waitFor();
  await expectAccessible('en: sign-in');
  await screenshot(page, 'en-01-sign-in');
  // Back to Chinese from the sign-in page itself.
  await page.getByLabel('Language').selectOption('zh');
  await page.getByText('你已退出登录。').waitFor();
  await page.getByLabel('管理令牌').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: '登录', exact: true }).click();
  // Back where the session ended, in Chinese.
  await page.getByRole('heading', { name: 'QQ 机器人账号', exact: true }).waitFor();
});

it("shows the settings in the manifest's order, and a refused change as a refusal in the plugin's words, keeping the previous values", async () => {
  await page.goto(`/plugins/${WEATHER}`);
  await page.getByRole('heading', { name: '设置' }).waitFor();
  const labels = await page.locator('form.settings .field > label').allInnerTexts();
  expect(labels.map((l) => l.replace(/\s*\*.*$/, '').trim())).toEqual(['Greeting', 'Units', 'API key']);
  expect(Object.keys((await api(host, 'GET', `/api/plugins/${WEATHER}`)).body.plugin.manifest.settings.configSchema)).toEqual([
    'greeting',
    'units',
    'apiKey',
  ]);

  await page.getByLabel('Units').fill('imperial');
  await page.getByRole('button', { name: '保存设置' }).click();
  await page.getByText(/^已保存。 com\.example\.weather 已在运行中应用新设置。/).waitFor();

  await page.getByLabel('Units').fill('kelvin');
  await page.getByRole('button', { name: '保存设置' }).click();
  const refusal = page.locator('form.settings').getByRole('alert');
  await refusal.waitFor();
  const text = (await refusal.innerText()).trim();
  expect(text).toContain('未保存：插件拒绝了这些设置');
  expect(text).toContain('SETTINGS_REFUSED');
  expect(text).toContain('units must be metric or imperial; kelvin is not supported');
  // No stack trace, no API path, no green "saved" box.
  expect(text).not.toMatch(/\n\s*at |\/api\/|weather\.js/);
  expect(await page.locator('form.settings .success').count()).toBe(0);
  await expectAccessible('zh: settings refused');
  await screenshot(page, 'zh-06-settings-refused');
  expect((await api(host, 'GET', `/api/plugins/${WEATHER}/settings`)).body.values.units).toBe('imperial');
  // A restart does not bring the refused value in.
  expect((await api(host, 'POST', `/api/plugins/${WEATHER}/restart`)).status).toBe(200);
  await waitForRunning(WEATHER);
  const reply = await api(host, 'POST', '/api/console/messages', {
    conversation: { type: 'c2c', id: 'u-weather' },
    sender: { id: 'u-weather' },
    text: '/weather',
  });
  expect(JSON.stringify(reply.body.outbound)).toContain('21 degrees imperial');
});

it('keeps a sent message as it was when the display name changes; long raw bodies wrap inside the reply', async () => {
  await page.getByRole('link', { name: '对话调试' }).click();
  await page.getByRole('heading', { name: '对话调试' }).waitFor();
  await page.getByLabel('你的用户 ID').fill('u-ada');
  await page.getByLabel('昵称').fill('Ada');
  await page.getByLabel('消息').fill('/echo first');
  await page.getByRole('button', { name: '发送' }).click();
  const chips = page.locator('.transcript .mention');
  await chips.first().waitFor();
  expect(await chips.allInnerTexts()).toContain('@Ada');
  await page.getByLabel('昵称').fill('Grace');
  await page.getByLabel('消息').fill(`/echo ${'x'.repeat(400)}`);
  await page.getByRole('button', { name: '发送' }).click();
  await page.locator('.transcript .mention', { hasText: '@Grace' }).waitFor();
  const names = await page
    .locator('.transcript > li')
    .evaluateAll((turns) => turns.map((t) => Array.from(t.querySelectorAll('.mention')).map((m) => m.textContent)));
  // The first reply still names the sender as the message was sent.
  expect(names.slice(-2)).toEqual([['@Ada'], ['@Grace']]);

  const last = page.locator('.transcript > li').last();
  await last.getByText('原始消息体').click();
  const raw = last.locator('pre.raw');
  await raw.waitFor();
  const box = await raw.evaluate((pre) => {
    const bubble = pre.closest('.bubble')!.getBoundingClientRect();
    const r = pre.getBoundingClientRect();
    return { overflow: pre.scrollWidth - pre.clientWidth, right: r.right, bubbleRight: bubble.right };
  });
  expect(box.overflow).toBeLessThanOrEqual(0);
  expect(box.right).toBeLessThanOrEqual(box.bubbleRight);
  expect(await raw.innerText()).toContain('x'.repeat(400).slice(0, 50));
  await expectAccessible('zh: playground history');
  await screenshot(page, 'zh-07-playground-history');
});

it('registers an HTTP plugin with its signing secret first and whole, a copy button and the next steps; its empty log says what it collects', async () => {
  await page.getByRole('link', { name: 'v2 插件', exact: true }).click();
  const panel = page.locator('section', { has: page.getByRole('heading', { name: '注册 HTTP 插件' }) });
  const url = panel.getByLabel('插件服务的基础 URL');
  // The field is as wide as its own placeholder at least.
  const fits = await url.evaluate((input: HTMLInputElement) => {
    const style = getComputedStyle(input);
    const ctx = document.createElement('canvas').getContext('2d')!;
    ctx.font = `${style.fontSize} ${style.fontFamily}`;
    return input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) >= ctx.measureText(input.placeholder).width;
  });
  expect(fits).toBe(true);
  await url.fill(httpUrl);
  await panel.getByRole('button', { name: '获取 manifest 并注册' }).click();
  const callout = panel.locator('.secret-callout');
  await callout.getByRole('heading', { name: '请现在复制签名密钥：它只显示这一次' }).waitFor();
  // Shown at the top of the panel, whole: nothing cut off.
  const secret = callout.locator('.secret-value');
  const shown = await secret.evaluate((el) => ({ text: el.textContent ?? '', cut: el.scrollWidth - el.clientWidth }));
  expect(shown.cut).toBeLessThanOrEqual(0);
  expect(shown.text.length).toBeGreaterThanOrEqual(32);
  const calloutTop = (await callout.boundingBox())!.y;
  const formTop = (await panel.locator('form').boundingBox())!.y;
  expect(calloutTop).toBeLessThan(formTop);
  await callout.getByRole('button', { name: '复制密钥' }).click();
  await callout.getByRole('button', { name: '已复制' }).waitFor();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(shown.text);
  expect(await callout.locator('ol.next-steps li').allInnerTexts()).toEqual([
    expect.stringContaining('HOST_PLUGIN_SECRET'),
    expect.stringContaining('重启插件服务'),
    expect.stringContaining('启用投递'),
  ]);
  await expectAccessible('zh: HTTP registration');
  await screenshot(page, 'zh-08-http-registered');
  writeFileSync(join(work, 'http.secret'), shown.text);
  await callout.getByRole('button', { name: '启用投递' }).click();
  await callout.getByText('已启用投递：插件现在会收到事件。').waitFor();

  await page.goto('/plugins/com.example.bare-echo');
  await page.getByRole('heading', { name: '日志', exact: true }).waitFor();
  await page.getByText('HTTP 插件自己的输出留在它的服务那边').waitFor();
  await page.getByLabel('语言').selectOption('en');
  await page.getByText("An HTTP plugin's own output stays with its service; the host writes here only what it notes").waitFor();
  await page.getByLabel('Language').selectOption('zh');
});

it('keeps the install and register panels above the plugin list, in sight however many plugins there are', async () => {
  await page.getByRole('link', { name: 'v2 插件', exact: true }).click();
  await page.locator('li[data-plugin-id="com.example.bare-echo"]').waitFor();
  expect(await page.locator('ul.plugins > li').count()).toBeGreaterThanOrEqual(3);
  const install = (await page.getByRole('heading', { name: '安装插件包（ZIP）' }).boundingBox())!;
  const register = (await page.getByRole('heading', { name: '注册 HTTP 插件' }).boundingBox())!;
  const list = (await page.getByRole('heading', { name: /已安装和已注册的插件/ }).boundingBox())!;
  expect(install.y).toBeLessThan(list.y);
  expect(register.y).toBeLessThan(list.y);
  expect(install.y + install.height).toBeLessThan(900);
});

it('says in the update dialog what each added permission allows', async () => {
  await page.locator('input[type=file]').setInputFiles({
    name: 'com.example.echo-1.1.0.zip',
    mimeType: 'application/zip',
    buffer: echoZip('1.1.0', ['messages.reply', 'messages.send']),
  });
  await page.getByRole('button', { name: '上传并安装' }).click();
  const dialog = page.getByRole('dialog', { name: '更新 com.example.echo？' });
  await dialog.waitFor();
  const added = dialog.locator('.changes-permissions');
  expect(await added.innerText()).toContain('它新申请了以下权限');
  expect(await added.innerText()).toContain('messages.send: 主动向群、频道或用户发送消息。');
  await expectAccessible('zh: update dialog');
  await screenshot(page, 'zh-09-update-dialog');
  await dialog.getByRole('button', { name: '用 1.1.0 替换 1.0.0' }).click();
  await page.getByText(/已更新 Echo 1\.1\.0（com\.example\.echo）/).waitFor();
});

it('restores a backup through the update dialog: the kept version side by side with the installed one, then the confirmed downgrade', async () => {
  await page.getByRole('link', { name: 'Echo', exact: true }).click();
  const backups = page.locator('section', { has: page.getByRole('heading', { name: '备份' }) });
  const item = backups.getByRole('listitem').filter({ hasText: '版本 1.0.0' });
  await item.waitFor();
  await item.getByRole('button', { name: /^恢复版本 1\.0\.0/ }).click();
  const dialog = page.getByRole('dialog', { name: '更新 com.example.echo？' });
  await dialog.waitFor();
  await dialog.getByText('这是降级：从 1.1.0 降到 1.0.0。').waitFor();
  await expectAccessible('zh: restore dialog');
  await screenshot(page, 'zh-10-restore-dialog');
  await dialog.getByRole('button', { name: '用 1.0.0 替换 1.1.0' }).click();
  await backups.getByText('已恢复 com.example.echo 的版本 1.0.0。').waitFor();
  expect((await api(host, 'GET', '/api/plugins/com.example.echo')).body.plugin.version).toBe('1.0.0');
});
