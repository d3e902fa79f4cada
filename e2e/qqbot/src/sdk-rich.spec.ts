// The rich message round trip of rich.spec.ts with a plugin written with each of the four SDKs
// (e2e/test-fixtures/sdk-vote), scaffolded with `host-plugin init --lang <lang>` and packed as the SDK's guide tells
// authors to: the Node project built with tsc and `host-plugin pack`, Python and Go with `host-plugin pack`, C#
// with `dotnet publish -c Release`. Against the built host and the fake QQ platform, each plugin answers /vote
// with a Markdown keyboard; a click on "Yes" comes back to the SDK's interaction handler as interaction.created,
// is acknowledged, and is answered with an image by URL (the fake fetches it from a local server) and a click on
// "No" with an image of bytes the plugin uploads (sent as file_data): both arrive as msg_type 7 with the upload's
// file_info and the click's event_id.
import { api, dotnetEnv, goPackEnv, installAndStart, linkWorkspaceNodeSdk, ROOT, runToolAsync } from '@host/e2e-support';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectClickCompleted, groupClick, PNG, serveImage, startRichQq, type ImageServer, type RichQq } from './rich-setup';

const BOT = { appId: '102030408', secret: 'e2eSecretForSdkRichQQ79' };
const CLI = join(ROOT, 'tools/host-plugin/dist/cli.cjs');
const TSC = require.resolve('typescript/bin/tsc');
const FIXTURES = join(__dirname, '../../test-fixtures/sdk-vote');
const GOOS = ({ win32: 'windows', darwin: 'darwin' } as Record<string, string>)[process.platform] ?? process.platform;
const GOARCH = ({ x64: 'amd64', ia32: '386' } as Record<string, string>)[process.arch] ?? process.arch;

interface Sdk {
  lang: string;
  /** The project folder `host-plugin init` creates (the C# assembly is named after it). */
  dir: string;
  pluginId: string;
  /** The fixture file, and where in the project it replaces the starter's source. */
  fixture: string;
  source: string;
  /** Packs the project as the SDK's guide says and answers the ZIP's path. */
  pack(project: string): Promise<string>;
}

const SDKS: Sdk[] = [
  {
    lang: 'node',
    dir: 'nodevote',
    pluginId: 'com.example.nodevote',
    fixture: 'node/plugin.ts',
    source: 'src/plugin.ts',
    async pack(project) {
      linkWorkspaceNodeSdk(project);
      await runToolAsync(process.execPath, [TSC, '-p', 'tsconfig.build.json'], project);
      await runToolAsync(process.execPath, [CLI, 'pack'], project);
      return join(project, 'artifacts', `${this.pluginId}.zip`);
    },
  },
  {
    lang: 'python',
    dir: 'pyvote',
    pluginId: 'com.example.pyvote',
    fixture: 'python/plugin.py',
    source: 'plugin.py',
    async pack(project) {
      await runToolAsync(process.execPath, [CLI, 'pack'], project, { ...process.env, PYTHONDONTWRITEBYTECODE: '1' });
      return join(project, 'artifacts', `${this.pluginId}.zip`);
    },
  },
  {
    lang: 'go',
    dir: 'govote',
    pluginId: 'com.example.govote',
    fixture: 'go/main.go',
    source: 'main.go',
    async pack(project) {
      await runToolAsync(process.execPath, [CLI, 'pack'], project, goPackEnv());
      return join(project, 'artifacts', `${this.pluginId}-${GOOS}-${GOARCH}.zip`);
    },
  },
  {
    lang: 'csharp',
    dir: 'csvote',
    pluginId: 'com.example.csvote',
    fixture: 'csharp/EchoPlugin.cs',
    source: 'EchoPlugin.cs',
    async pack(project) {
      await runToolAsync('dotnet', ['publish', '-c', 'Release'], project, dotnetEnv());
      return join(project, 'artifacts', 'Csvote.zip');
    },
  },
];

let work: string;
let image: ImageServer;
let qq: RichQq;

/**
 * Scaffolds the SDK's project, puts the fixture in place of the starter's source (with the image server's URL),
 * declares media.upload and keeps /vote as the only command, and packs it.
 */
async function build(sdk: Sdk): Promise<Buffer> {
  const imageUrl = imageUrlOf(sdk);
  await runToolAsync(
    process.execPath,
    [CLI, 'init', sdk.dir, '--lang', sdk.lang, '--id', sdk.pluginId, '--name', 'Vote', '--author', 'Tests'],
    work,
  );
  const project = join(work, sdk.dir);
  writeFileSync(join(project, sdk.source), readFileSync(join(FIXTURES, sdk.fixture), 'utf8').replace('@IMAGE_URL@', imageUrl));
  const manifestPath = join(project, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { permissions: string[]; commands: { name: string }[] };
  manifest.permissions.push('media.upload');
  manifest.commands = manifest.commands.filter((c) => c.name === 'vote');
  writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
  const zip = await sdk.pack(project);
  if (!existsSync(zip)) throw new Error(`packing the ${sdk.lang} plugin wrote no ${zip}`);
  return readFileSync(zip);
}

/**
 * The URL of the image a plugin sends: one for each SDK, as the host reuses the file_info of a URL it uploaded
 * for the account's groups and the platform would not fetch it again.
 */
function imageUrlOf(sdk: Sdk): string {
  return `${image.url}?sdk=${sdk.lang}`;
}

/** What QQ Bot gets for a callback button of the SDKs' keyboards (its id the SDK's, or the host's when it names none). */
function callbackButton(label: string, data: string, style: 0 | 1) {
  return {
    id: expect.any(String),
    render_data: { label, visited_label: label, style },
    action: { type: 1, data, permission: { type: 2 }, unsupport_tips: label },
  };
}

/** Posts a click on `button` and expects the platform to get its acknowledgement. */
async function click(id: string, group: string, member: string, button: { id: string; action: { data: string } }) {
  const { platform, signer } = qq;
  const acks = platform.interactionAcks.length;
  expect(await signer.post(groupClick({ id, group, member, buttonId: button.id, data: button.action.data }))).toEqual({
    status: 200,
    body: { op: 12 },
  });
  await platform.waitFor(() => platform.interactionAcks.length > acks, `the acknowledgement of ${id}`);
  expect(platform.interactionAcks.slice(acks)).toEqual([expect.objectContaining({ interactionId: id, body: { code: 0 } })]);
}

beforeAll(async () => {
  for (const f of [CLI, join(ROOT, 'libs/plugin-sdk/dist/index.cjs')]) {
    if (!existsSync(f)) throw new Error(`${f} is missing: run "npx nx run e2e-qqbot:test", which builds it first`);
  }
  mkdirSync(join(ROOT, 'tmp'), { recursive: true });
  // Inside the workspace so the Node project's dev tools (typescript, @types) resolve upwards.
  work = mkdtempSync(join(ROOT, 'tmp', 'e2e-qqbot-sdk-rich-'));
  image = await serveImage();
  qq = await startRichQq(BOT, 'host-qqbot-sdk-rich-');
}, 120_000);

afterAll(async () => {
  await qq?.close();
  await image?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

it.each(SDKS.map((sdk) => [sdk.lang, sdk] as const))(
  'a %s SDK plugin sends a keyboard, and answers each acknowledged click with an image by URL and one of uploaded bytes',
  async (lang, sdk) => {
    const { host, platform, signer } = qq;
    const zip = await build(sdk);
    await installAndStart(host, zip, sdk.pluginId);
    const group = `GROUP_${lang.toUpperCase()}`;
    const member = `MEMBER_${lang.toUpperCase()}`;
    const sent = platform.messages.length;
    const uploads = platform.uploads.length;

    const vote = signer.groupAtMessage({ groupOpenId: group, memberOpenId: member, content: ' /vote' });
    expect(await signer.post(vote)).toEqual({ status: 200, body: { op: 12 } });
    await platform.waitForMessages(sent + 1);
    const question = platform.messages[sent]!;
    expect(question.path).toBe(`/v2/groups/${group}/messages`);
    expect(question.body).toEqual({
      msg_type: 2,
      markdown: { content: '**Vote?**' },
      keyboard: { content: { rows: [{ buttons: [callbackButton('Yes', 'vote:yes', 1), callbackButton('No', 'vote:no', 0)] }] } },
      msg_id: (vote['d'] as { id: string }).id,
      msg_seq: 1,
    });
    const [yes, no] = (question.body as any).keyboard.content.rows[0].buttons;

    // "Yes": the image by URL, which the platform fetches.
    await click(`${lang}-click-yes`, group, member, yes);
    await platform.waitForMessages(sent + 2);
    expect(platform.uploads.slice(uploads)).toEqual([
      expect.objectContaining({
        path: `/v2/groups/${group}/files`,
        body: { file_type: 1, url: imageUrlOf(sdk), srv_send_msg: false },
        fetched: { status: 200, contentType: 'image/png', bytes: PNG.length },
      }),
    ]);
    expect(platform.messages[sent + 1]!.body).toEqual({
      msg_type: 7,
      content: 'you chose vote:yes',
      media: { file_info: platform.uploads[uploads]!.fileInfo },
      event_id: `${lang}-click-yes`,
      msg_seq: 1,
    });
    const first = await expectClickCompleted(host, sdk.pluginId);

    // "No": the bytes the plugin uploaded through the SDK, sent as file_data.
    await click(`${lang}-click-no`, group, member, no);
    await platform.waitForMessages(sent + 3);
    expect(platform.uploads.slice(uploads + 1)).toEqual([
      expect.objectContaining({
        path: `/v2/groups/${group}/files`,
        body: { file_type: 1, file_data: PNG.toString('base64'), srv_send_msg: false },
        fetched: { status: 200, contentType: 'image/png', bytes: PNG.length },
      }),
    ]);
    expect(platform.messages[sent + 2]!.body).toEqual({
      msg_type: 7,
      content: 'you chose vote:no',
      media: { file_info: platform.uploads[uploads + 1]!.fileInfo },
      event_id: `${lang}-click-no`,
      msg_seq: 1,
    });
    await expectClickCompleted(host, sdk.pluginId, [first]);

    // The next SDK's plugin takes /vote alone.
    expect((await api(host, 'DELETE', `/api/plugins/${sdk.pluginId}`)).status).toBe(200);
  },
  300_000,
);
