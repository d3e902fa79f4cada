// A validly signed group-message webhook of about 12 KB whose `d` holds an
// array nested 6,000 deep, and a console message nested as deep, sent to the
// built host on both stores: both are refused before they are accepted, and
// the event log goes on recording later events, before and after restarts.
import { ADMIN_TOKEN, api, buildHost, startHost, type RunningHost } from '@host/e2e-support';
import { FakeQqPlatform, WebhookSigner } from '@host/host-qqbot/testing';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BOT = { appId: '102030408', secret: 'e2eSecretForQQNested3' };
const DEPTH = 6000;

beforeAll(() => buildHost());

describe.each(['sql', 'file'])('with HOST_STORE=%s', (store) => {
  let dataDir: string;
  let platform: FakeQqPlatform;
  let host: RunningHost | undefined;
  let accountsFile: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), `host-nested-${store}-`));
    platform = await FakeQqPlatform.start(BOT);
    accountsFile = `${dataDir}.qqbot.json`;
    writeFileSync(
      accountsFile,
      JSON.stringify({ accounts: [{ id: 'main', apiBaseUrl: platform.apiBaseUrl, tokenUrl: platform.tokenUrl, ...BOT }] }),
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
    host = await startHost(dataDir, { HOST_QQBOT_ACCOUNTS_FILE: accountsFile, HOST_STORE: store });
    const accounts = await api(host, 'GET', '/api/qqbot/accounts');
    return new WebhookSigner({ ...BOT, webhookUrl: accounts.body.accounts[0].webhookUrl });
  };
  const restart = async () => {
    expect(await host!.stop()).toEqual({ code: 0, signal: null });
    return start();
  };
  const say = async (text: string): Promise<string> => {
    const sent = await api(host!, 'POST', '/api/console/messages', {
      conversation: { type: 'group', id: 'g-nested' },
      sender: { id: 'u1' },
      text,
    });
    expect(sent.status).toBe(200);
    return sent.body.eventId;
  };
  const loggedEventIds = async (): Promise<string[]> =>
    (await api(host!, 'GET', '/api/events?limit=100')).body.events.map((r: { eventId: string }) => r.eventId);
  const qqEventOf = async (messageId: string): Promise<string | undefined> => {
    for (let i = 0; i < 50; i++) {
      const events = (await api(host!, 'GET', '/api/events?limit=100')).body.events as {
        eventId: string;
        event: { message: { id: string } };
      }[];
      const found = events.find((r) => r.event.message.id === messageId);
      if (found) return found.eventId;
      await new Promise((r) => setTimeout(r, 100));
    }
    return undefined;
  };

  it('refuses the nested webhook and console message, and records every later event, across restarts', async () => {
    let signer = await start();
    try {
      const payload = signer.groupAtMessage({ groupOpenId: 'G_NESTED', memberOpenId: 'M_NESTED', content: ' /echo deep' });
      const nestedBody = JSON.stringify(payload).replace(/}}$/, `,"x":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}}`);
      expect(nestedBody.length).toBeGreaterThan(12_000);
      expect(nestedBody.length).toBeLessThan(64 * 1024);
      const webhook = await signer.post(nestedBody);
      expect(webhook.status).toBe(400);
      expect(webhook.body.error.code).toBe('QQBOT_PAYLOAD_TOO_COMPLEX');

      const consoleBody = JSON.stringify({ conversation: { type: 'group', id: 'g-nested' }, sender: { id: 'u1' }, text: 'deep' }).replace(
        /}$/,
        `,"extra":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}`,
      );
      const nestedConsole = await fetch(`${host!.url}/api/console/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: consoleBody,
      });
      expect(nestedConsole.status).toBe(400);
      expect(((await nestedConsole.json()) as { error: { code: string } }).error.code).toBe('REQUEST_JSON_TOO_COMPLEX');

      // Later events are recorded: a console message and a signed QQ message.
      const before = await say('after the nested ones');
      const qqMessage = signer.groupAtMessage({ groupOpenId: 'G_NESTED', memberOpenId: 'M_NESTED', content: ' /echo plain' });
      expect((await signer.post(qqMessage)).status).toBe(200);
      const qqEvent = await qqEventOf((qqMessage['d'] as { id: string }).id);
      expect(qqEvent).toBeDefined();
      await signer.close();

      signer = await restart();
      expect(await loggedEventIds()).toEqual(expect.arrayContaining([before, qqEvent]));
      const after = await say('after a restart');
      await signer.close();

      signer = await restart();
      expect(await loggedEventIds()).toEqual(expect.arrayContaining([before, qqEvent, after]));
      expect(host!.output()).not.toContain('Maximum call stack size exceeded');
    } finally {
      await signer.close().catch(() => undefined);
    }
  });
});
