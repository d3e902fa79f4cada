// A burst of signed QQ group messages far beyond one plugin's speed, against
// a fake platform that takes 50 ms per reply: every message the host answered
// {op: 12} gets its reply. The plugin declares no concurrency, so the
// protocol's defaults are what is tested. An event the host does not take is
// answered {op: 12, d: 1} and pushed again, as the platform does.
import { api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';
import { buildZip } from '@host/host-installer/testing';
import { FakeQqPlatform, WebhookSigner } from '@host/host-qqbot/testing';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BOT = { appId: '102030406', secret: 'e2eSecretForQQBurst7' };
const FIXTURE = join(__dirname, '../../test-fixtures/misbehaving-plugin');
const PLUGIN_ID = 'com.example.qq-burst';
const BURST = 150;

function echoPackage(): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  manifest['pluginId'] = PLUGIN_ID;
  manifest['permissions'] = ['messages.reply'];
  // The defaults of the protocol, not the fixture's own numbers.
  delete manifest['concurrency'];
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest, null, 2) },
    { name: 'plugin.mjs', data: readFileSync(join(FIXTURE, 'plugin.mjs')) },
  ]);
}

let dataDir: string;
let platform: FakeQqPlatform;
let host: RunningHost;
let signer: WebhookSigner;

beforeAll(async () => {
  buildHost();
  dataDir = mkdtempSync(join(tmpdir(), 'host-qqburst-'));
  platform = await FakeQqPlatform.start({ ...BOT, latencyMilliseconds: 50 });
  const accountsFile = `${dataDir}.qqbot.json`;
  writeFileSync(
    accountsFile,
    JSON.stringify({
      accounts: [{ id: 'main', displayName: 'Burst bot', apiBaseUrl: platform.apiBaseUrl, tokenUrl: platform.tokenUrl, ...BOT }],
    }),
    { mode: 0o600 },
  );
  host = await startHost(dataDir, { HOST_QQBOT_ACCOUNTS_FILE: accountsFile });
  const installed = await api(host, 'POST', '/api/plugins/packages', packageForm(echoPackage(), { startAfterInstall: 'true' }));
  expect(installed.status).toBe(201);
  const accounts = await api(host, 'GET', '/api/qqbot/accounts');
  signer = new WebhookSigner({ ...BOT, webhookUrl: accounts.body.accounts[0].webhookUrl });
});

afterAll(async () => {
  await signer?.close();
  await host?.stop();
  await platform?.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(`${dataDir}.qqbot.json`, { force: true });
  rmSync(`${dataDir}.admin-token`, { force: true });
});

it(`answers every one of ${BURST} group messages that arrive at once, with a platform that takes 50 ms per reply`, async () => {
  const payloads = Array.from({ length: BURST }, (_, i) =>
    signer.groupAtMessage({ groupOpenId: 'GROUP_BURST', memberOpenId: `MEMBER_${i % 7}`, content: ` /echo burst ${i}` }),
  );
  const answers = await Promise.all(payloads.map((p) => signer.post(p)));
  expect(answers.every((a) => a.status === 200)).toBe(true);
  // What the platform does with {op: 12, d: 1}: it pushes the event again later.
  let deferred = payloads.filter((_, i) => (answers[i]!.body as { d?: number }).d === 1);
  for (let round = 0; deferred.length > 0 && round < 50; round++) {
    await new Promise((r) => setTimeout(r, 200));
    const again = await Promise.all(deferred.map((p) => signer.post(p)));
    deferred = deferred.filter((_, i) => (again[i]!.body as { d?: number }).d === 1);
  }
  expect(deferred).toHaveLength(0);
  await platform.waitForMessages(BURST, 60_000).catch((e: Error) => {
    throw new Error(`${e.message}; host log:\n${host.output().slice(-4000)}`);
  });
  const replied = new Set(platform.messages.map((m) => m.body['msg_id']));
  for (const p of payloads) expect(replied).toContain((p['d'] as { id: string }).id);
  expect(platform.messageCount).toBe(BURST);
  // The plugin list shows the queue: nothing waits, nothing expired.
  const plugin = await api(host, 'GET', `/api/plugins/${PLUGIN_ID}`);
  expect(plugin.body.plugin.queue).toMatchObject({ waiting: 0, expired: 0, dropped: 0 });
});
