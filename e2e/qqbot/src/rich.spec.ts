// The built host with a QQ Bot account pointed at the local fake platform and a stdio plugin (written against
// the wire format alone) that answers /vote with a Markdown keyboard and a button click with an image: the
// platform gets the keyboard body, the click comes back as interaction.created and is acknowledged, and the
// image is uploaded (the fake fetches it from a local server, as the platform fetches a URL) and sent as
// msg_type 7 with its file_info and the click's event_id.
import { api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';
import { buildZip } from '@host/host-installer/testing';
import { FakeQqPlatform, WebhookSigner } from '@host/host-qqbot/testing';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BOT = { appId: '102030406', secret: 'e2eSecretForRichQQ77' };
const FIXTURE = join(__dirname, '../../fixtures/rich-plugin');
// A 1x1 PNG.
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
    '1f15c4890000000d49444154789c6360000000000500010d0a2db40000000049454e44ae426082',
  'hex',
);

let dataDir: string;
let platform: FakeQqPlatform;
let host: RunningHost;
let signer: WebhookSigner;
let files: Server;
let imageUrl: string;

function richPackage(): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8')) as { transport: { stdio: { args: string[] } } };
  manifest.transport.stdio.args.push(`--image-url=${imageUrl}`);
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest, null, 2) },
    { name: 'plugin.mjs', data: readFileSync(join(FIXTURE, 'plugin.mjs')) },
  ]);
}

beforeAll(async () => {
  buildHost();
  files = createServer((req, res) => {
    if (req.url === '/thanks.png') res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
  imageUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/thanks.png`;
  dataDir = mkdtempSync(join(tmpdir(), 'host-qqbot-rich-'));
  platform = await FakeQqPlatform.start(BOT);
  const accountsFile = `${dataDir}.qqbot.json`;
  writeFileSync(
    accountsFile,
    JSON.stringify({
      accounts: [{ id: 'main', markdown: true, apiBaseUrl: platform.apiBaseUrl, tokenUrl: platform.tokenUrl, ...BOT }],
    }),
    { mode: 0o600 },
  );
  // The host listens on loopback, so its address policy lets the loopback image server through.
  host = await startHost(dataDir, { HOST_QQBOT_ACCOUNTS_FILE: accountsFile }, [], { startTimeoutMilliseconds: 60_000 });
  const installed = await api(host, 'POST', '/api/plugins/packages', packageForm(richPackage(), { startAfterInstall: 'true' }));
  expect(installed.status).toBe(201);
  const accounts = await api(host, 'GET', '/api/qqbot/accounts');
  signer = new WebhookSigner({ ...BOT, webhookUrl: accounts.body.accounts[0].webhookUrl });
}, 120_000);

afterAll(async () => {
  await signer?.close();
  await host?.stop();
  await platform?.close();
  await new Promise((r) => files?.close(r));
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(`${dataDir}.qqbot.json`, { force: true });
  rmSync(`${dataDir}.admin-token`, { force: true });
});

it('sends a keyboard, takes the click as interaction.created, acknowledges it and answers with an uploaded image', async () => {
  const vote = signer.groupAtMessage({ groupOpenId: 'GROUP_RICH', memberOpenId: 'MEMBER_RICH', content: ' /vote' });
  expect(await signer.post(vote)).toEqual({ status: 200, body: { op: 12 } });
  await platform.waitForMessages(1);
  expect(platform.messages[0]!.body).toEqual({
    msg_type: 2,
    markdown: { content: '**Vote?**' },
    keyboard: {
      content: {
        rows: [
          {
            buttons: [
              {
                id: 'yes',
                render_data: { label: 'Yes', visited_label: 'Yes', style: 1 },
                action: { type: 1, data: 'vote:yes', permission: { type: 2 }, unsupport_tips: 'Yes' },
              },
              {
                id: 'no',
                render_data: { label: 'No', visited_label: 'No', style: 0 },
                action: { type: 1, data: 'vote:no', permission: { type: 2 }, unsupport_tips: 'No' },
              },
            ],
          },
        ],
      },
    },
    msg_id: (vote['d'] as { id: string }).id,
    msg_seq: 1,
  });

  const click = {
    op: 0,
    id: 'INTERACTION_CREATE:e2e-1',
    t: 'INTERACTION_CREATE',
    d: {
      id: 'e2e-interaction-1',
      type: 11,
      chat_type: 1,
      scene: 'group',
      timestamp: new Date().toISOString(),
      group_openid: 'GROUP_RICH',
      group_member_openid: 'MEMBER_RICH',
      data: { type: 11, resolved: { button_data: 'vote:yes', button_id: 'yes' } },
      version: 1,
    },
  };
  expect(await signer.post(click)).toEqual({ status: 200, body: { op: 12 } });
  await platform.waitFor(() => platform.interactionAcks.length === 1, 'the acknowledgement of the click');
  expect(platform.interactionAcks[0]).toMatchObject({ interactionId: 'e2e-interaction-1', body: { code: 0 } });
  await platform.waitForMessages(2);
  expect(platform.uploads).toEqual([
    expect.objectContaining({
      path: '/v2/groups/GROUP_RICH/files',
      body: { file_type: 1, url: imageUrl, srv_send_msg: false },
      fetched: { status: 200, contentType: 'image/png', bytes: PNG.length },
    }),
  ]);
  expect(platform.messages[1]!.body).toEqual({
    msg_type: 7,
    content: 'MEMBER_RICH chose vote:yes',
    media: { file_info: platform.uploads[0]!.fileInfo },
    event_id: 'e2e-interaction-1',
    msg_seq: 1,
  });
  // The event log shows the click with the plugin's delivery and the reply it made.
  for (let i = 0; ; i++) {
    const events = await api(host, 'GET', '/api/events?limit=20');
    const record = events.body.events.find((r: any) => r.event.eventType === 'interaction.created');
    if (record?.completedAt) {
      expect(record.deliveries).toEqual([expect.objectContaining({ pluginId: 'com.example.rich', state: 'completed' })]);
      expect(record.outbound).toEqual([expect.objectContaining({ error: null })]);
      break;
    }
    if (i > 100) throw new Error('the click never completed in the event log');
    await new Promise((r) => setTimeout(r, 100));
  }
}, 60_000);
