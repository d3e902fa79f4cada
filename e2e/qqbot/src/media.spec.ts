// The built host with a QQ Bot account pointed at the local fake platform and a stdio plugin (written against
// the wire format alone) that uploads image bytes with media.upload, media.chunk and media.finish and replies
// with the media id: the platform gets the bytes as file_data and then msg_type 7 with the file_info. Each
// refusal (too large, a content type that lies, a chunk out of order, an unknown media id, no permission, too
// many uploads in a minute) comes back to the plugin with its code while the host keeps running, and the
// console shows an uploaded image at a URL the admin app loads with the admin token.
import { ADMIN_TOKEN, api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';
import { buildZip } from '@host/host-installer/testing';
import { FakeQqPlatform, WebhookSigner } from '@host/host-qqbot/testing';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BOT = { appId: '102030407', secret: 'e2eSecretForMediaQQ78' };
const FIXTURE = join(__dirname, '../../test-fixtures/media-plugin');
// The 1x1 PNG the fixture uploads.
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360000000000500010d0a2db40000000049454e44ae426082',
  'hex',
);

let dataDir: string;
let platform: FakeQqPlatform;
let host: RunningHost;
let signer: WebhookSigner;

function mediaPackage(change: (manifest: any) => void = () => undefined): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8'));
  change(manifest);
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest, null, 2) },
    { name: 'plugin.mjs', data: readFileSync(join(FIXTURE, 'plugin.mjs')) },
  ]);
}

/** Sends `/command` in a QQ group and answers the body of the message the platform then gets. */
async function command(name: string): Promise<Record<string, unknown>> {
  const before = platform.messages.length;
  const message = signer.groupAtMessage({ groupOpenId: 'GROUP_MEDIA', memberOpenId: 'MEMBER_MEDIA', content: ` /${name}` });
  expect(await signer.post(message)).toEqual({ status: 200, body: { op: 12 } });
  await platform.waitForMessages(before + 1);
  return platform.messages[before]!.body;
}

beforeAll(async () => {
  buildHost();
  dataDir = mkdtempSync(join(tmpdir(), 'host-qqbot-media-'));
  platform = await FakeQqPlatform.start(BOT);
  const accountsFile = `${dataDir}.qqbot.json`;
  writeFileSync(
    accountsFile,
    JSON.stringify({ accounts: [{ id: 'main', apiBaseUrl: platform.apiBaseUrl, tokenUrl: platform.tokenUrl, ...BOT }] }),
    { mode: 0o600 },
  );
  host = await startHost(dataDir, { HOST_QQBOT_ACCOUNTS_FILE: accountsFile }, [], { startTimeoutMilliseconds: 60_000 });
  for (const zip of [
    mediaPackage(),
    // The same plugin without the media.upload permission, answering /nopic.
    mediaPackage((m) => {
      m.pluginId = 'com.example.nomedia';
      m.permissions = ['messages.reply'];
      m.commands = [{ name: 'nopic', prefixes: ['/'] }];
    }),
  ]) {
    const installed = await api(host, 'POST', '/api/plugins/packages', packageForm(zip, { startAfterInstall: 'true' }));
    expect(installed.status).toBe(201);
  }
  const accounts = await api(host, 'GET', '/api/qqbot/accounts');
  signer = new WebhookSigner({ ...BOT, webhookUrl: accounts.body.accounts[0].webhookUrl });
}, 120_000);

afterAll(async () => {
  await signer?.close();
  await host?.stop();
  await platform?.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(`${dataDir}.qqbot.json`, { force: true });
  rmSync(`${dataDir}.admin-token`, { force: true });
});

it('uploads the bytes a plugin sent as file_data, then sends msg_type 7 with the file_info', async () => {
  const body = await command('pic');
  expect(platform.uploads).toEqual([
    expect.objectContaining({
      path: '/v2/groups/GROUP_MEDIA/files',
      body: { file_type: 1, file_data: PNG.toString('base64'), srv_send_msg: false },
      fetched: { status: 200, contentType: 'image/png', bytes: PNG.length },
    }),
  ]);
  expect(body).toEqual({
    msg_type: 7,
    content: 'pic: ',
    media: { file_info: platform.uploads[0]!.fileInfo },
    msg_id: expect.any(String),
    msg_seq: 1,
  });
}, 60_000);

it.each([
  ['big', 'message.media.too_large'],
  ['lie', 'message.media.type_mismatch'],
  ['skip', 'message.media.upload_invalid'],
  ['ghost', 'message.media.unknown'],
  ['nopic', 'message.permission.denied'],
])(
  'refuses /%s with %s and nothing reaches the platform but the plugin’s answer',
  async (name, code) => {
    const uploads = platform.uploads.length;
    expect(await command(name)).toMatchObject({ msg_type: 0, content: `${name} refused: ${code}` });
    expect(platform.uploads).toHaveLength(uploads);
  },
  60_000,
);

it('shows an uploaded image in the console at a URL the admin app loads with the admin token', async () => {
  const sent = await api(host, 'POST', '/api/console/messages', {
    conversation: { type: 'group', id: 'console-group' },
    sender: { id: 'console-user' },
    text: '/pic',
  });
  expect(sent.status).toBe(200);
  const media = sent.body.outbound[0].body.media;
  expect(media).toEqual({ file_type: 1, url: expect.stringMatching(/^\/api\/console\/media\/[A-Za-z0-9_-]{16,64}$/) });
  const got = await fetch(`${host.url}${media.url}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(got.status).toBe(200);
  expect(got.headers.get('content-type')).toBe('image/png');
  expect(got.headers.get('x-content-type-options')).toBe('nosniff');
  expect(Buffer.from(await got.arrayBuffer())).toEqual(PNG);
  expect((await fetch(`${host.url}${media.url}`)).status).toBe(401);
  const missing = await api(host, 'GET', '/api/console/media/AAAAAAAAAAAAAAAAAAAAAAAA');
  expect({ status: missing.status, code: missing.body.error.code }).toEqual({ status: 404, code: 'MEDIA_NOT_FOUND' });
}, 60_000);

it('refuses uploads past the rate of a minute, and the host and its plugins keep running', async () => {
  expect(String((await command('burst'))['content'])).toMatch(/^burst refused: message\.media\.rate_limited after \d+$/);
  const plugins = await api(host, 'GET', '/api/plugins');
  expect(plugins.status).toBe(200);
  const states = Object.fromEntries(plugins.body.plugins.map((p: any) => [p.pluginId, p.state]));
  expect(states).toMatchObject({ 'com.example.media': 'running', 'com.example.nomedia': 'running' });
}, 60_000);
