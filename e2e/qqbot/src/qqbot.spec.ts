// The built host with a QQ Bot account pointed at a local fake of the
// platform (token endpoint, message endpoints) and a stdio plugin installed:
// the fake's signer posts webhooks with real Ed25519 signatures, the plugin
// answers, and the fake checks what arrives.
import { api, buildHost, packageForm, startHost, type RunningHost } from '@host/e2e-support';
import { buildZip } from '@host/host-installer/testing';
import { keysFromSecret, validationSignature } from '@host/host-qqbot';
import { FakeQqPlatform, WebhookSigner } from '@host/host-qqbot/testing';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BOT = { appId: '102030405', secret: 'e2eSecretForQQBot42' };
const FIXTURE = join(__dirname, '../../test-fixtures/misbehaving-plugin');
const PLUGIN_ID = 'com.example.qq-echo';

function echoPackage(): Buffer {
  const manifest = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  manifest['pluginId'] = PLUGIN_ID;
  manifest['permissions'] = ['messages.reply', 'messages.send'];
  return buildZip([
    { name: 'manifest.json', data: JSON.stringify(manifest, null, 2) },
    { name: 'plugin.mjs', data: readFileSync(join(FIXTURE, 'plugin.mjs')) },
  ]);
}

let dataDir: string;
let platform: FakeQqPlatform;
let host: RunningHost;
let signer: WebhookSigner;
let webhookUrl: string;

beforeAll(async () => {
  buildHost();
  dataDir = mkdtempSync(join(tmpdir(), 'host-qqbot-'));
  platform = await FakeQqPlatform.start(BOT);
  const accountsFile = join(`${dataDir}.qqbot.json`);
  writeFileSync(
    accountsFile,
    JSON.stringify({
      accounts: [
        { id: 'main', displayName: 'E2E bot', markdown: true, apiBaseUrl: platform.apiBaseUrl, tokenUrl: platform.tokenUrl, ...BOT },
      ],
    }),
    { mode: 0o600 },
  );
  // A busy machine (the e2e suites share its cores) can take longer than the default to open the embedded database.
  host = await startHost(dataDir, { HOST_QQBOT_ACCOUNTS_FILE: accountsFile }, [], { startTimeoutMilliseconds: 60_000 });
  const installed = await api(host, 'POST', '/api/plugins/packages', packageForm(echoPackage(), { startAfterInstall: 'true' }));
  expect(installed.status).toBe(201);
  const accounts = await api(host, 'GET', '/api/qqbot/accounts');
  expect(accounts.status).toBe(200);
  webhookUrl = accounts.body.accounts[0].webhookUrl;
  signer = new WebhookSigner({ ...BOT, webhookUrl });
});

afterAll(async () => {
  await signer?.close();
  await host?.stop();
  await platform?.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(`${dataDir}.qqbot.json`, { force: true });
  rmSync(`${dataDir}.admin-token`, { force: true });
});

/** The event record of the host event a platform message became. */
async function recordOf(platformMessageId: string): Promise<any> {
  for (let i = 0; i < 100; i++) {
    const events = await api(host, 'GET', '/api/events?limit=50');
    const found = events.body.events.find((r: any) => r.event.message.id === platformMessageId);
    if (found && found.completedAt) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no completed event for ${platformMessageId}`);
}

it('shows the account with its webhook URL and no secret', async () => {
  const accounts = await api(host, 'GET', '/api/qqbot/accounts');
  expect(accounts.body.accounts).toEqual([
    expect.objectContaining({ id: 'main', appId: BOT.appId, source: 'file', webhookUrl: `${host.url}/api/qqbot/webhook/main` }),
  ]);
  expect(JSON.stringify(accounts.body)).not.toContain(BOT.secret);
  // The webhook needs no admin token; the account list does.
  const noToken = await fetch(`${host.url}/api/qqbot/accounts`);
  expect(noToken.status).toBe(401);
});

it('passes the callback URL validation (op 13)', async () => {
  const res = await signer.validation('Tk4e2eValidation01', '1725442341');
  expect(res).toEqual({
    status: 200,
    body: {
      plain_token: 'Tk4e2eValidation01',
      signature: validationSignature(keysFromSecret(BOT.secret).privateKey, '1725442341', 'Tk4e2eValidation01'),
    },
  });
});

it('answers a signed group @-message with the plugin Markdown reply mentioning the sender', async () => {
  const payload = signer.groupAtMessage({
    groupOpenId: 'GROUP_OPENID_E2E',
    memberOpenId: 'MEMBER_OPENID_E2E',
    content: ' /echo hello **world** <b>',
  });
  const started = performance.now();
  const answer = await signer.post(payload);
  expect(answer).toEqual({ status: 200, body: { op: 12 } });
  // Well inside the platform's 3 s deadline: the plugin runs behind the answer.
  expect(performance.now() - started).toBeLessThan(3000);
  await platform.waitForMessages(1);
  const sent = platform.messages[0]!;
  const messageId = (payload['d'] as { id: string }).id;
  expect(sent.path).toBe('/v2/groups/GROUP_OPENID_E2E/messages');
  expect(sent.body).toEqual({
    msg_type: 2,
    markdown: { content: '<qqbot-at-user id="MEMBER_OPENID_E2E" /> hello **world** <\u2060b>' },
    msg_id: messageId,
    msg_seq: 1,
  });
  expect(sent.authorization).toBe(`QQBot ${platform.issuedTokens[0]}`);
  expect(sent.unionAppId).toBe(BOT.appId);
  const record = await recordOf(messageId);
  expect(record.event).toMatchObject({ source: 'qqbot', bot: { botAccountId: 'main' }, conversation: { type: 'group' } });
  expect(record.outbound[0]).toMatchObject({ pluginId: PLUGIN_ID, messageId: 'fake-msg-1', error: null });
  const accounts = await api(host, 'GET', '/api/qqbot/accounts');
  expect(accounts.body.accounts[0].lastEvent).toMatchObject({
    type: 'GROUP_AT_MESSAGE_CREATE',
    outcome: 'dispatched',
    eventId: record.eventId,
  });
});

it('hands a guild @-message to the plugin as the user typed it and answers so the channel shows the same', async () => {
  const before = platform.messageCount;
  const payload = signer.channelAtMessage({
    channelId: 'CHANNEL_E2E',
    guildId: 'GUILD_E2E',
    authorId: 'AUTHOR_E2E',
    botUserId: '11586990140073229091',
    typed: '/echo a <b> &amp; c',
  });
  expect((payload['d'] as { content: string }).content).toBe('<@!11586990140073229091> /echo a &lt;b&gt; &amp;amp; c');
  expect(await signer.post(payload)).toEqual({ status: 200, body: { op: 12 } });
  await platform.waitForMessages(before + 1);
  const record = await recordOf((payload['d'] as { id: string }).id);
  expect(record.event.message.content).toBe('/echo a <b> &amp; c');
  expect(record.event.message.mentions).toEqual([{ provider: 'qqbot', mentionId: '11586990140073229091', displayName: 'bot' }]);
  // The channel unescapes once, so the user sees "a <b> &amp; c" again.
  const sent = platform.messages[before]!;
  expect([sent.path, sent.body['content']]).toEqual(['/channels/CHANNEL_E2E/messages', 'a &lt;b&gt; &amp;amp; c']);
});

it('refuses wrong signatures (401, logged) and acknowledges a redelivery (200, op 12) without dispatching it again', async () => {
  const before = platform.messageCount;
  const payload = signer.groupAtMessage({ groupOpenId: 'G2', memberOpenId: 'M2', content: ' /echo forged' });
  const wrong = await signer.post(payload, { signature: 'ab'.repeat(64) });
  expect(wrong.status).toBe(401);
  expect(wrong.body.error.code).toBe('QQBOT_SIGNATURE_INVALID');
  const unsigned = await signer.post(payload, { unsigned: true });
  expect(unsigned.status).toBe(401);
  const stale = await signer.post(payload, { timestamp: Math.floor(Date.now() / 1000) - 3600 });
  expect(stale.body.error.code).toBe('QQBOT_TIMESTAMP_STALE');
  expect(host.output()).toMatch(/refused a webhook request from .* \(QQBOT_SIGNATURE_INVALID\)/);
  const first = await signer.post(payload);
  expect(first.status).toBe(200);
  const replay = await signer.post(payload);
  expect(replay).toEqual({ status: 200, body: { op: 12 } });
  await platform.waitForMessages(before + 1);
  await new Promise((r) => setTimeout(r, 300));
  expect(platform.messageCount).toBe(before + 1);
});

it('fetches a new token when the platform refuses the cached one', async () => {
  const tokens = platform.tokenRequests;
  const before = platform.messageCount;
  platform.expireTokens();
  const payload = signer.groupAtMessage({ groupOpenId: 'G3', memberOpenId: 'M3', content: ' /echo after expiry' });
  await signer.post(payload);
  await platform.waitForMessages(before + 1);
  expect(platform.tokenRequests).toBe(tokens + 1);
  expect(platform.messages.at(-1)!.authorization).toBe(`QQBot ${platform.issuedTokens.at(-1)}`);
});

it('retries a passive reply after a platform 5xx', async () => {
  const before = platform.messageCount;
  platform.failNext({ status: 502, body: { code: 500, message: 'bad gateway' } });
  const payload = signer.groupAtMessage({ groupOpenId: 'G4', memberOpenId: 'M4', content: ' /echo through a 502' });
  await signer.post(payload);
  await platform.waitForMessages(before + 1);
  const record = await recordOf((payload['d'] as { id: string }).id);
  expect(record.deliveries[0].completion.error).toBeNull();
});

it('gives the plugin the rate-limit refusal with a stable code and the platform code', async () => {
  platform.failNext({ status: 429, body: { code: 20028, message: 'channel hit write rate limit' } });
  const payload = signer.groupAtMessage({ groupOpenId: 'G5', memberOpenId: 'M5', content: ' /echo too many' });
  await signer.post(payload);
  const record = await recordOf((payload['d'] as { id: string }).id);
  // The fixture reports the reply failure's error.data.code as its handler error.
  expect(record.deliveries[0].completion.error).toMatchObject({ code: 'message.provider.rate_limited' });
  expect(record.outbound[0].error).toMatchObject({ code: 'message.provider.rate_limited' });
  expect(record.outbound[0].error.message).toContain('code 20028');
});

it('gives the plugin message.reference.reply_limit when the platform says the replies are used up (22009)', async () => {
  platform.failNext({ status: 400, body: { message: 'msg limit exceed', code: 22009, err_code: 22009, trace_id: 'e2e' } });
  const payload = signer.groupAtMessage({ groupOpenId: 'G6', memberOpenId: 'M6', content: ' /echo once more' });
  await signer.post(payload);
  const record = await recordOf((payload['d'] as { id: string }).id);
  expect(record.deliveries[0].completion.error).toMatchObject({ code: 'message.reference.reply_limit' });
  expect(record.outbound[0].error.message).toContain('code 22009');
});

it('gives a direct (C2C) message a text reply to the user', async () => {
  const before = platform.messageCount;
  const payload = signer.c2cMessage({ userOpenId: 'USER_OPENID_E2E', content: '/echo hi there' });
  await signer.post(payload);
  await platform.waitForMessages(before + 1);
  const sent = platform.messages.at(-1)!;
  expect(sent.path).toBe('/v2/users/USER_OPENID_E2E/messages');
  expect(sent.body).toEqual({ msg_type: 0, content: 'hi there', msg_id: (payload['d'] as { id: string }).id, msg_seq: 1 });
});

describe('messages.send through a QQ Bot account', () => {
  // The host has two bot accounts: the console bot and "main". The fixture sends "/send <type>:<id>[@<bot>] text".
  async function sendFromGroup(command: string): Promise<any> {
    const payload = signer.groupAtMessage({ groupOpenId: 'G_SEND_FROM', memberOpenId: 'M_SEND', content: ` ${command}` });
    await signer.post(payload);
    return recordOf((payload['d'] as { id: string }).id);
  }

  it('refuses an active message to another group (the platform ended them) before calling it: message.provider.active_unavailable', async () => {
    const before = platform.messageCount;
    const record = await sendFromGroup('/send group:GROUP_OPENID_OTHER@main daily report');
    expect(record.deliveries[0].completion.error).toMatchObject({ code: 'message.provider.active_unavailable' });
    expect(platform.messageCount).toBe(before);
  });

  it('sends a messages.send keyed to its event to the same group as a reply to that message', async () => {
    const before = platform.messageCount;
    const payload = signer.groupAtMessage({
      groupOpenId: 'G_SEND_FROM',
      memberOpenId: 'M_SEND',
      content: ' /send group:G_SEND_FROM@main +event daily report',
    });
    await signer.post(payload);
    const record = await recordOf((payload['d'] as { id: string }).id);
    expect(record.deliveries[0].completion.error).toBeNull();
    await platform.waitForMessages(before + 1);
    const sent = platform.messages.at(-1)!;
    expect(sent.path).toBe('/v2/groups/G_SEND_FROM/messages');
    expect(sent.body).toEqual({ msg_type: 0, content: 'daily report', msg_id: (payload['d'] as { id: string }).id, msg_seq: 1 });
    expect(sent.authorization).toBe(`QQBot ${platform.issuedTokens.at(-1)}`);
  });

  it('sends an active message to a guild channel through the named bot account', async () => {
    const before = platform.messageCount;
    const record = await sendFromGroup('/send channel:CHANNEL_OTHER@main daily report');
    expect(record.deliveries[0].completion.error).toBeNull();
    await platform.waitForMessages(before + 1);
    const sent = platform.messages.at(-1)!;
    expect([sent.path, sent.body]).toEqual(['/channels/CHANNEL_OTHER/messages', { content: 'daily report' }]);
  });

  it('refuses an unknown bot account and a send that names none, sending nothing', async () => {
    const before = platform.messageCount;
    const unknown = await sendFromGroup('/send group:GROUP_OPENID_OTHER@nobody hi');
    expect(unknown.deliveries[0].completion.error).toMatchObject({ code: 'message.target.bot_unknown' });
    const unnamed = await sendFromGroup('/send group:GROUP_OPENID_OTHER hi');
    expect(unnamed.deliveries[0].completion.error).toMatchObject({ code: 'message.target.bot_required' });
    expect(platform.messageCount).toBe(before);
  });
});
