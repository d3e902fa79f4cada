// A signed webhook request captured by someone and sent again after the host
// restarted, within the 300 s timestamp tolerance: refused, on both stores,
// and the same message under a new event id (or none) is refused too. The
// fake platform counts the replies: the message is answered once.
import { api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';
import { buildZip } from '@host/host-installer/testing';
import { FakeQqPlatform, WebhookSigner } from '@host/host-qqbot/testing';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BOT = { appId: '102030407', secret: 'e2eSecretForQQReplay9' };
const FIXTURE = join(__dirname, '../../test-fixtures/misbehaving-plugin');
const PLUGIN_ID = 'com.example.qq-replay';

function echoPackage(): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  manifest['pluginId'] = PLUGIN_ID;
  manifest['permissions'] = ['messages.reply'];
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest, null, 2) },
    { name: 'plugin.mjs', data: readFileSync(join(FIXTURE, 'plugin.mjs')) },
  ]);
}

beforeAll(() => buildHost());

describe.each(['sql', 'file'])('with HOST_STORE=%s', (store) => {
  let dataDir: string;
  let platform: FakeQqPlatform;
  let host: RunningHost | undefined;
  let accountsFile: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), `host-qqreplay-${store}-`));
    platform = await FakeQqPlatform.start(BOT);
    accountsFile = `${dataDir}.qqbot.json`;
    writeFileSync(
      accountsFile,
      JSON.stringify({
        accounts: [{ id: 'main', displayName: 'Replay bot', apiBaseUrl: platform.apiBaseUrl, tokenUrl: platform.tokenUrl, ...BOT }],
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

  const start = async () => {
    host = await startHost(dataDir, { HOST_QQBOT_ACCOUNTS_FILE: accountsFile, HOST_STORE: store }, [], {
      startTimeoutMilliseconds: 60_000,
    });
    const accounts = await api(host, 'GET', '/api/qqbot/accounts');
    return new WebhookSigner({ ...BOT, webhookUrl: accounts.body.accounts[0].webhookUrl });
  };

  /** The host events a platform message became (the event log outlives the restart). */
  const recordsOf = async (messageId: string): Promise<unknown[]> => {
    const events = await api(host!, 'GET', '/api/events?limit=50');
    return events.body.events.filter((r: { event: { message: { id: string } } }) => r.event.message.id === messageId);
  };

  it('acknowledges without dispatch a request replayed after a restart, and the same message under another event id or none', async () => {
    let signer = await start();
    const installed = await api(host!, 'POST', '/api/plugins/packages', packageForm(echoPackage(), { startAfterInstall: 'true' }));
    expect(installed.status).toBe(201);
    const payload = signer.groupAtMessage({ groupOpenId: 'GROUP_REPLAY', memberOpenId: 'MEMBER_REPLAY', content: ' /echo once' });
    const messageId = (payload['d'] as { id: string }).id;
    const timestamp = Math.floor(Date.now() / 1000);
    expect(await signer.post(payload, { timestamp })).toEqual({ status: 200, body: { op: 12 } });
    await platform.waitForMessages(1);
    await signer.close();

    expect(await host!.stop()).toEqual({ code: 0, signal: null });
    signer = await start();
    try {
      // The captured request byte for byte: same body, same timestamp, so the same signature.
      // Acknowledged as the platform expects (it pushes again until it gets a 200), never dispatched again.
      expect(await signer.post(payload, { timestamp })).toEqual({ status: 200, body: { op: 12 } });
      // The same message signed again under a new event id, and under none.
      expect(await signer.post({ ...payload, id: 'GROUP_AT_MESSAGE_CREATE:renamed' })).toEqual({ status: 200, body: { op: 12 } });
      const { id: _id, ...withoutId } = payload;
      expect(await signer.post(withoutId)).toEqual({ status: 200, body: { op: 12 } });

      // The plugin runs after the restart: a new message is answered, and it is the only other reply.
      const fresh = signer.groupAtMessage({ groupOpenId: 'GROUP_REPLAY', memberOpenId: 'MEMBER_REPLAY', content: ' /echo new' });
      expect((await signer.post(fresh)).status).toBe(200);
      await platform.waitForMessages(2);
      await new Promise((r) => setTimeout(r, 500));
      expect(platform.messages.map((m) => m.body['msg_id'])).toEqual([messageId, (fresh['d'] as { id: string }).id]);
      expect(await recordsOf(messageId)).toHaveLength(1);
      const account = (await api(host!, 'GET', '/api/qqbot/accounts')).body.accounts[0];
      expect(account.counters).toMatchObject({ refused: 3, dispatched: 1 });
    } finally {
      await signer.close();
    }
  });
});
