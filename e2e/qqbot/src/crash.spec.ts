// A host killed outright (SIGKILL) in the middle of a burst of signed QQ group
// messages it had already acknowledged: after it starts again on the same data
// directory, every message gets exactly one reply (none lost, none sent twice)
// and exactly one final delivery in the event log, matching what the user saw.
import { api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';
import { buildZip } from '@host/host-installer/testing';
import { FakeQqPlatform, WebhookSigner } from '@host/host-qqbot/testing';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BOT = { appId: '102030407', secret: 'e2eSecretForQQCrash8' };
const FIXTURE = join(__dirname, '../../test-fixtures/misbehaving-plugin');
const PLUGIN_ID = 'com.example.qq-crash';
const BURST = 120;

function slowPackage(): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  manifest['pluginId'] = PLUGIN_ID;
  manifest['permissions'] = ['messages.reply'];
  // A few at a time, so most of the burst still waits when the host is killed.
  manifest['concurrency'] = { maxConcurrentEvents: 8 };
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest, null, 2) },
    { name: 'plugin.mjs', data: readFileSync(join(FIXTURE, 'plugin.mjs')) },
  ]);
}

let dataDir: string;
let accountsFile: string;
let platform: FakeQqPlatform;
let host: RunningHost | undefined;

const start = async (): Promise<WebhookSigner> => {
  host = await startHost(dataDir, { HOST_QQBOT_ACCOUNTS_FILE: accountsFile });
  const accounts = await api(host, 'GET', '/api/qqbot/accounts');
  return new WebhookSigner({ ...BOT, webhookUrl: accounts.body.accounts[0].webhookUrl });
};

beforeAll(async () => {
  buildHost();
  dataDir = mkdtempSync(join(tmpdir(), 'host-qqcrash-'));
  platform = await FakeQqPlatform.start({ ...BOT, latencyMilliseconds: 20 });
  accountsFile = `${dataDir}.qqbot.json`;
  writeFileSync(
    accountsFile,
    JSON.stringify({
      accounts: [{ id: 'main', displayName: 'Crash bot', apiBaseUrl: platform.apiBaseUrl, tokenUrl: platform.tokenUrl, ...BOT }],
    }),
    { mode: 0o600 },
  );
});

afterAll(async () => {
  await host?.stop();
  await platform?.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(accountsFile, { force: true });
  rmSync(`${dataDir}.admin-token`, { force: true });
});

it(`answers each of ${BURST} acknowledged group messages exactly once across a SIGKILL of the host`, async () => {
  let signer = await start();
  const installed = await api(host!, 'POST', '/api/plugins/packages', packageForm(slowPackage(), { startAfterInstall: 'true' }));
  expect(installed.status).toBe(201);
  const payloads = Array.from({ length: BURST }, (_, i) =>
    signer.groupAtMessage({ groupOpenId: 'GROUP_CRASH', memberOpenId: `MEMBER_${i % 5}`, content: ` /slow 150 crash ${i}` }),
  );
  const answers = await Promise.all(payloads.map((p) => signer.post(p)));
  // Every message was acknowledged: from here on the platform never pushes them again.
  expect(answers.map((a) => a.body)).toEqual(answers.map(() => ({ op: 12 })));
  await platform.waitForMessages(16, 30_000);
  const before = platform.messageCount;
  await host!.stop('SIGKILL');
  await signer.close();
  expect(before).toBeLessThan(BURST);

  signer = await start();
  await platform.waitForMessages(BURST, 60_000).catch((e: Error) => {
    throw new Error(`${e.message} (${platform.messageCount} replies); host log:\n${host!.output().slice(-4000)}`);
  });
  // Give a duplicate time to show up.
  await new Promise((r) => setTimeout(r, 1_000));
  await signer.close();
  const perMessage = new Map<string, number>();
  for (const m of platform.messages) perMessage.set(String(m.body['msg_id']), (perMessage.get(String(m.body['msg_id'])) ?? 0) + 1);
  const ids = payloads.map((p) => (p['d'] as { id: string }).id);
  expect(ids.map((id) => perMessage.get(id) ?? 0)).toEqual(ids.map(() => 1));
  expect(platform.messageCount).toBe(BURST);

  // The event log has each message once, delivered once, completed: no `interrupted` for a reply that was sent.
  // (A delivery the restarted host took over from its queue row reaches the record within a lease round or two.)
  type Logged = { event: { message: { id: string } }; completedAt: string | null; deliveries: { pluginId: string; state: string }[] };
  let records: Logged[] = [];
  for (let i = 0; i < 150; i++) {
    const log = await api(host!, 'GET', `/api/events?limit=${BURST * 2}`);
    records = (log.body.events as Logged[]).filter((r) => ids.includes(r.event.message.id));
    if (records.length === BURST && records.every((r) => r.completedAt !== null)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(records).toHaveLength(BURST);
  expect(records.map((r) => r.deliveries.map((d) => `${d.pluginId}:${d.state}`).join(','))).toEqual(
    records.map(() => `${PLUGIN_ID}:completed`),
  );
  console.log(`crash: ${before} of ${BURST} replies before the SIGKILL, the rest after the restart; none twice`);
}, 180_000);
