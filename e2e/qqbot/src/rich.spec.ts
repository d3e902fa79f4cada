// The built host with a QQ Bot account pointed at the local fake platform and a stdio plugin (written against
// the wire format alone) that answers /vote with a Markdown keyboard and a button click with an image: the
// platform gets the keyboard body, the click comes back as interaction.created and is acknowledged, and the
// image is uploaded (the fake fetches it from a local server, as the platform fetches a URL) and sent as
// msg_type 7 with its file_info and the click's event_id.
import { api, packageForm } from '@host/e2e-support';
import { buildZip } from '@host/host-installer/testing';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectClickCompleted, groupClick, PNG, serveImage, startRichQq, type ImageServer, type RichQq } from './rich-setup';

const BOT = { appId: '102030406', secret: 'e2eSecretForRichQQ77' };
const FIXTURE = join(__dirname, '../../test-fixtures/rich-plugin');

let qq: RichQq;
let image: ImageServer;

function richPackage(): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8')) as { transport: { stdio: { args: string[] } } };
  manifest.transport.stdio.args.push(`--image-url=${image.url}`);
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest, null, 2) },
    { name: 'plugin.mjs', data: readFileSync(join(FIXTURE, 'plugin.mjs')) },
  ]);
}

beforeAll(async () => {
  image = await serveImage();
  qq = await startRichQq(BOT, 'host-qqbot-rich-');
  const installed = await api(qq.host, 'POST', '/api/plugins/packages', packageForm(richPackage(), { startAfterInstall: 'true' }));
  expect(installed.status).toBe(201);
}, 120_000);

afterAll(async () => {
  await qq?.close();
  await image?.close();
});

it('sends a keyboard, takes the click as interaction.created, acknowledges it and answers with an uploaded image', async () => {
  const { host, platform, signer } = qq;
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

  const click = groupClick({ id: 'e2e-interaction-1', group: 'GROUP_RICH', member: 'MEMBER_RICH', buttonId: 'yes', data: 'vote:yes' });
  expect(await signer.post(click)).toEqual({ status: 200, body: { op: 12 } });
  await platform.waitFor(() => platform.interactionAcks.length === 1, 'the acknowledgement of the click');
  expect(platform.interactionAcks[0]).toMatchObject({ interactionId: 'e2e-interaction-1', body: { code: 0 } });
  await platform.waitForMessages(2);
  expect(platform.uploads).toEqual([
    expect.objectContaining({
      path: '/v2/groups/GROUP_RICH/files',
      body: { file_type: 1, url: image.url, srv_send_msg: false },
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
  await expectClickCompleted(host, 'com.example.rich');
}, 60_000);
