import { ADMIN_ROUTES, declaredErrorCodes } from '@host/admin-api';
import { type ReplayStore } from '@host/host-core';
import { errorHandler, mountRoutes } from '@host/host-routes';
import { FileReplayStore } from '@host/host-store';
import type { MessageEvent } from '@host/protocol';
import { MessageEventSchema } from '@host/protocol';
import express, { Router } from 'express';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { QqBotAccounts } from './accounts';
import { qqbotRoutes } from './routes';
import { keysFromSecret, signHex } from './signing';
import { WebhookSigner } from './testing';
import { QqBotWebhook } from './webhook';

const ACCOUNT = { id: 'main', appId: '11111111', secret: 'DG5g3B4j9X2KOErG', displayName: 'Test bot' };
const PATH = '/api/qqbot/webhook/main';
const { privateKey } = keysFromSecret(ACCOUNT.secret);
const builder = new WebhookSigner({ secret: ACCOUNT.secret, appId: ACCOUNT.appId, webhookUrl: 'http://unused.invalid/' });

const opened: QqBotAccounts[] = [];
afterEach(async () => {
  for (const accounts of opened.splice(0)) await accounts.close();
});
afterAll(() => builder.close());

async function setup(
  o: {
    dispatch?: (e: MessageEvent) => Promise<unknown>;
    refuse?: () => boolean;
    /** What keeping the event does (default: kept at once). */
    keep?: () => Promise<void>;
    now?: () => number;
    maxWebhookBytes?: number;
    replays?: ReplayStore;
  } = {},
) {
  const accounts = new QqBotAccounts(o.replays ? { replay: { store: o.replays } } : {});
  opened.push(accounts);
  await accounts.load([ACCOUNT]);
  const events: MessageEvent[] = [];
  const logs: string[] = [];
  const webhook = new QqBotWebhook({
    accounts,
    accept: (e) =>
      o.refuse?.()
        ? { accepted: false, reason: 'the host is at its bound of waiting events' }
        : (() => {
            const durable = o.keep?.() ?? Promise.resolve();
            return {
              accepted: true as const,
              durable,
              routed: durable.then(() => (o.dispatch ?? (async (ev: MessageEvent) => void events.push(ev)))(e)),
            };
          })(),
    log: (level, m) => logs.push(`${level} ${m}`),
    ...(o.now ? { now: o.now } : {}),
  });
  const router = Router();
  mountRoutes(router, qqbotRoutes({ accounts, webhook, publicUrl: 'https://bot.example.com', maxWebhookBytes: o.maxWebhookBytes }));
  const app = express();
  app.use('/api', router);
  app.use(errorHandler({}));
  return { app, accounts, events, logs };
}

function signed(body: string, timestamp = Math.floor(Date.now() / 1000)) {
  return {
    'content-type': 'application/json',
    'x-signature-timestamp': String(timestamp),
    'x-signature-ed25519': signHex(privateKey, `${timestamp}${body}`),
  };
}

/** Posts to the webhook; every error it answers must be one its contract declares. */
async function post(app: express.Express, body: string, headers: Record<string, string>): Promise<request.Response> {
  const res = await request(app).post(PATH).set(headers).send(body);
  if (res.status >= 400) expect(declaredErrorCodes(ADMIN_ROUTES.qqBotWebhook)).toContain(res.body.error.code);
  return res;
}

describe('QQ Bot webhook', () => {
  it('answers the callback validation (op 13) with the known-answer signature', async () => {
    const { app, accounts } = await setup();
    const body = '{"d":{"plain_token":"Arq0D5A61EgUu4OxUvOp","event_ts":"1725442341"},"op":13}';
    const res = await post(app, body, { 'content-type': 'application/json' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      plain_token: 'Arq0D5A61EgUu4OxUvOp',
      signature:
        '87befc99c42c651b3aac0278e71ada338433ae26fcb24307bdc5ad38c1adc2d01bcfcadc0842edac85e85205028a1132afe09280305f13aa6909ffc2d652c706',
    });
    // Unsigned: anyone can send it, so it does not count as the platform reaching the account.
    expect(accounts.get('main')!.lastEvent).toBeNull();
    const again = await post(app, body, signed(body));
    expect(again.body).toEqual(res.body);
    expect(accounts.get('main')!.lastEvent).toMatchObject({ op: 13, outcome: 'validated' });
  });

  it('refuses a signed body nested deeper than an event may be, before acknowledging or dispatching it', async () => {
    const { app, events, accounts } = await setup();
    const payload = builder.groupAtMessage({ groupOpenId: 'G_OPENID_1', memberOpenId: 'MEMBER_1', content: ' /echo hi' });
    const body = JSON.stringify(payload).replace(/}$/, `,"x":${'['.repeat(6000)}${']'.repeat(6000)}}`);
    expect(body.length).toBeLessThan(64 * 1024);
    const res = await post(app, body, signed(body));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('QQBOT_PAYLOAD_TOO_COMPLEX');
    expect(events).toEqual([]);
    expect(accounts.get('main')!.lastEvent).toMatchObject({ outcome: 'refused', error: 'QQBOT_PAYLOAD_TOO_COMPLEX' });
    const wide = JSON.stringify({ ...payload, d: { ...(payload['d'] as object), x: Array.from({ length: 10_001 }, () => 0) } });
    expect((await post(app, wide, signed(wide))).body.error.code).toBe('QQBOT_PAYLOAD_TOO_COMPLEX');
  });

  it('refuses to sign a validation token that could be a webhook body (no signing oracle)', async () => {
    const { app } = await setup();
    const forged = JSON.stringify({ op: 13, d: { plain_token: '{"op":0,"t":"GROUP_AT_MESSAGE_CREATE"}', event_ts: '1725442341' } });
    const res = await post(app, forged, { 'content-type': 'application/json' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('QQBOT_PAYLOAD_INVALID');
  });

  it('turns a signed group @-message into a message.created event and acknowledges with op 12', async () => {
    const { app, events, accounts } = await setup();
    const payload = builder.groupAtMessage({
      groupOpenId: 'G_OPENID_1',
      memberOpenId: 'MEMBER_1',
      content: ' /echo hi',
      timestamp: '2026-01-02T10:00:00+08:00',
      attachments: [{ content_type: 'image/png', filename: 'a.png', url: 'gchat.qpic.cn/x.png', size: 12 }],
    });
    const body = JSON.stringify(payload);
    const res = await post(app, body, signed(body));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ op: 12 });
    expect(events).toHaveLength(1);
    const event = MessageEventSchema.parse(events[0]);
    const d = payload['d'] as { id: string };
    expect(event).toMatchObject({
      eventType: 'message.created',
      source: 'qqbot',
      timestamp: '2026-01-02T10:00:00+08:00',
      bot: { botAccountId: 'main', platform: 'qqbot', externalBotId: '11111111', displayName: 'Test bot' },
      conversation: { type: 'group', conversationId: 'G_OPENID_1', groupOpenId: 'G_OPENID_1' },
      sender: { provider: 'qqbot', mentionId: 'MEMBER_1', memberOpenId: 'MEMBER_1' },
      message: {
        id: d.id,
        content: ' /echo hi',
        attachments: [{ id: `${d.id}:0`, contentType: 'image/png', url: 'https://gchat.qpic.cn/x.png', sizeBytes: 12, fileName: 'a.png' }],
        mentions: [],
      },
      messageReference: { messageId: d.id, targetType: 'group', targetId: 'G_OPENID_1', replyUntil: '2026-01-02T02:05:00.000Z' },
    });
    expect(event.rawPayload).toEqual(payload);
    expect(accounts.get('main')!.lastEvent).toMatchObject({
      op: 0,
      type: 'GROUP_AT_MESSAGE_CREATE',
      outcome: 'dispatched',
      eventId: event.eventId,
    });
  });

  it('maps a direct (C2C) message with a 60-minute reply window to the user', async () => {
    const { app, events } = await setup();
    const payload = builder.c2cMessage({ userOpenId: 'USER_1', content: 'hello', timestamp: '2026-01-02T10:00:00+08:00' });
    const body = JSON.stringify(payload);
    expect((await post(app, body, signed(body))).status).toBe(200);
    expect(events[0]).toMatchObject({
      conversation: { type: 'c2c', conversationId: 'USER_1', c2cOpenId: 'USER_1' },
      sender: { mentionId: 'USER_1', userOpenId: 'USER_1' },
      messageReference: { targetType: 'user', targetId: 'USER_1', replyUntil: '2026-01-02T03:00:00.000Z' },
    });
  });

  it('answers before the plugins are done: dispatch runs behind the answer', async () => {
    let dispatched = 0;
    const { app } = await setup({ dispatch: () => (dispatched++, new Promise(() => undefined)) });
    const body = JSON.stringify(builder.groupAtMessage({ groupOpenId: 'G', memberOpenId: 'M', content: 'x' }));
    const res = await post(app, body, signed(body));
    expect(res.status).toBe(200);
    expect(dispatched).toBe(1);
  });

  it('answers {op: 12, d: 1} to an event the host does not take, so the platform pushes it again, and takes that push', async () => {
    let full = true;
    const { app, events, accounts } = await setup({ refuse: () => full });
    const payload = builder.groupAtMessage({ groupOpenId: 'G', memberOpenId: 'M', content: 'x' });
    const body = JSON.stringify(payload);
    const first = await post(app, body, signed(body));
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ op: 12, d: 1 });
    expect(events).toHaveLength(0);
    expect(accounts.get('main')!.counters).toMatchObject({ deferred: 1, dispatched: 0 });
    expect(accounts.get('main')!.lastEvent).toMatchObject({ outcome: 'deferred', error: 'EVENTS_OVERLOADED', platformEventId: payload.id });
    // The platform's next push of the same event is no replay: it is taken now.
    full = false;
    const again = await post(app, body, signed(body));
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ op: 12 });
    expect(events).toHaveLength(1);
  });

  it('answers {op: 12, d: 1} to an event the host could not keep, and takes the push that follows once it can', async () => {
    let broken = true;
    const { app, events, accounts, logs } = await setup({
      keep: () => (broken ? Promise.reject(new Error('the database is away')) : Promise.resolve()),
    });
    const payload = builder.groupAtMessage({ groupOpenId: 'G', memberOpenId: 'M', content: 'x' });
    const body = JSON.stringify(payload);
    const first = await post(app, body, signed(body));
    expect(first.body).toEqual({ op: 12, d: 1 });
    expect(events).toHaveLength(0);
    expect(accounts.get('main')!.lastEvent).toMatchObject({ outcome: 'deferred', error: 'STORE_UNAVAILABLE' });
    expect(logs.join('\n')).toContain('could not be kept (the database is away)');
    broken = false;
    const again = await post(app, body, signed(body));
    expect(again.body).toEqual({ op: 12 });
    await new Promise((r) => setImmediate(r));
    expect(events).toHaveLength(1);
  });

  it('tells the platform "received" only once the event is kept', async () => {
    let keep!: () => void;
    const kept = new Promise<void>((r) => (keep = r));
    const { app } = await setup({ keep: () => kept });
    const body = JSON.stringify(builder.groupAtMessage({ groupOpenId: 'G', memberOpenId: 'M', content: 'x' }));
    let answered = false;
    const res = post(app, body, signed(body)).then((r) => ((answered = true), r));
    await new Promise((r) => setTimeout(r, 100));
    expect(answered).toBe(false);
    keep();
    expect((await res).body).toEqual({ op: 12 });
  });

  it('refuses a wrong signature with 401 and a log line, dispatching nothing', async () => {
    const { app, events, logs, accounts } = await setup();
    const body = JSON.stringify(builder.groupAtMessage({ groupOpenId: 'G', memberOpenId: 'M', content: 'x' }));
    const headers = signed(body);
    const tampered = body.replace('"x"', '"y"');
    const res = await post(app, tampered, headers);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('QQBOT_SIGNATURE_INVALID');
    expect(events).toHaveLength(0);
    expect(logs.some((l) => l.startsWith('warn') && l.includes('QQBOT_SIGNATURE_INVALID'))).toBe(true);
    expect(accounts.get('main')!.counters.refused).toBe(1);
    // A signature of another bot's secret.
    const other = keysFromSecret('another-bot-secret').privateKey;
    const ts = String(Math.floor(Date.now() / 1000));
    const res2 = await post(app, body, { ...headers, 'x-signature-timestamp': ts, 'x-signature-ed25519': signHex(other, ts + body) });
    expect(res2.status).toBe(401);
  });

  it('refuses a message event without signature headers, or with only one of them', async () => {
    const { app, events } = await setup();
    const body = JSON.stringify(builder.groupAtMessage({ groupOpenId: 'G', memberOpenId: 'M', content: 'x' }));
    expect((await post(app, body, { 'content-type': 'application/json' })).status).toBe(401);
    const { 'x-signature-ed25519': _sig, ...onlyTimestamp } = signed(body);
    expect((await post(app, body, onlyTimestamp)).status).toBe(401);
    expect((await post(app, 'not json', { 'content-type': 'application/json' })).status).toBe(401);
    expect(events).toHaveLength(0);
  });

  it('refuses a stale or future timestamp even with a valid signature', async () => {
    const now = Date.now();
    const { app, events } = await setup({ now: () => now });
    const body = JSON.stringify(builder.groupAtMessage({ groupOpenId: 'G', memberOpenId: 'M', content: 'x' }));
    for (const offset of [-301, 301]) {
      const res = await post(app, body, signed(body, Math.floor(now / 1000) + offset));
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('QQBOT_TIMESTAMP_STALE');
    }
    expect(events).toHaveLength(0);
  });

  it('acknowledges a redelivered event id (200, op 12) and dispatches it once', async () => {
    const { app, events } = await setup();
    const payload = builder.groupAtMessage({ groupOpenId: 'G', memberOpenId: 'M', content: 'x' });
    const body = JSON.stringify(payload);
    expect((await post(app, body, signed(body))).status).toBe(200);
    const res = await post(app, body, signed(body));
    expect([res.status, res.body]).toEqual([200, { op: 12 }]);
    // The same event id in a freshly signed, different body is a redelivery too.
    const again = JSON.stringify({ ...payload, d: { ...(payload['d'] as object), content: 'y' } });
    expect((await post(app, again, signed(again, Math.floor(Date.now() / 1000) - 5))).body).toEqual({ op: 12 });
    expect(events).toHaveLength(1);
  });

  it('acknowledges the same message again under a new event id, or under none, and dispatches it once', async () => {
    const { app, events } = await setup();
    const payload = builder.groupAtMessage({ groupOpenId: 'G', memberOpenId: 'M', content: 'x' });
    const body = JSON.stringify(payload);
    expect((await post(app, body, signed(body))).status).toBe(200);
    const renamed = JSON.stringify({ ...payload, id: 'GROUP_AT_MESSAGE_CREATE:another' });
    const res = await post(app, renamed, signed(renamed));
    expect([res.status, res.body]).toEqual([200, { op: 12 }]);
    const { id: _id, ...withoutId } = payload;
    const unnamed = JSON.stringify(withoutId);
    expect((await post(app, unnamed, signed(unnamed))).body).toEqual({ op: 12 });
    expect(events).toHaveLength(1);
    // Another message of the same sender is another message.
    const next = JSON.stringify(builder.groupAtMessage({ groupOpenId: 'G', memberOpenId: 'M', content: 'x' }));
    expect((await post(app, next, signed(next))).status).toBe(200);
    expect(events).toHaveLength(2);
  });

  it('names an event with neither id by its signature: the same request is a replay, the same body signed again is not', async () => {
    const { app, logs } = await setup();
    const body = JSON.stringify({ op: 0, t: 'GROUP_ADD_ROBOT', d: { group_openid: 'G' } });
    const now = Math.floor(Date.now() / 1000);
    const redelivered = () => logs.filter((l) => l.includes('QQBOT_EVENT_REPLAYED')).length;
    expect((await post(app, body, signed(body, now))).status).toBe(200);
    expect((await post(app, body, signed(body, now))).status).toBe(200);
    expect(redelivered()).toBe(1);
    expect((await post(app, body, signed(body, now - 1))).status).toBe(200);
    expect(redelivered()).toBe(1);
  });

  it('refuses a replay after a restart when its memory is in the store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qqbot-replays-'));
    try {
      const first = await FileReplayStore.open(dir);
      const before = await setup({ replays: first });
      const payload = builder.c2cMessage({ userOpenId: 'U', content: 'once' });
      const body = JSON.stringify(payload);
      const headers = signed(body);
      expect((await post(before.app, body, headers)).status).toBe(200);
      await first.close();
      const second = await FileReplayStore.open(dir);
      const after = await setup({ replays: second });
      const res = await post(after.app, body, headers);
      expect([res.status, res.body]).toEqual([200, { op: 12 }]);
      expect(after.events).toHaveLength(0);
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('acknowledges event types without a mapping, logging them as unsupported', async () => {
    const { app, events, logs, accounts } = await setup();
    const body = JSON.stringify({ op: 0, id: 'GROUP_MSG_REJECT:1', t: 'GROUP_MSG_REJECT', d: { group_openid: 'G' } });
    const res = await post(app, body, signed(body));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ op: 12 });
    expect(events).toHaveLength(0);
    expect(logs.some((l) => l.includes('GROUP_MSG_REJECT has no mapping'))).toBe(true);
    expect(accounts.get('main')!.lastEvent).toMatchObject({ type: 'GROUP_MSG_REJECT', outcome: 'unsupported' });
    const broken = JSON.stringify({ op: 0, id: 'E2', t: 'GROUP_AT_MESSAGE_CREATE', d: { id: 'm' } });
    expect((await post(app, broken, signed(broken))).status).toBe(200);
    expect(logs.some((l) => l.includes('GROUP_AT_MESSAGE_CREATE without a valid d.'))).toBe(true);
  });

  it('maps a channel @-message when its fields are there', async () => {
    const { app, events } = await setup();
    const body = JSON.stringify({
      op: 0,
      id: 'AT_MESSAGE_CREATE:1',
      t: 'AT_MESSAGE_CREATE',
      d: {
        id: 'cm1',
        channel_id: 'C1',
        guild_id: 'GU1',
        content: '<@!999> /echo hi',
        timestamp: '2026-01-02T10:00:00+08:00',
        author: { id: 'U1', username: 'alice' },
        member: { nick: 'Alice' },
        mentions: [
          { id: '999', username: 'bot', bot: true },
          { id: 'U2', username: 'bob' },
        ],
      },
    });
    expect((await post(app, body, signed(body))).status).toBe(200);
    expect(events[0]).toMatchObject({
      conversation: { type: 'channel', conversationId: 'C1', guildId: 'GU1', channelId: 'C1' },
      sender: { mentionId: 'U1', displayName: 'Alice' },
      message: {
        content: '/echo hi',
        mentions: [
          { provider: 'qqbot', mentionId: '999', displayName: 'bot' },
          { provider: 'qqbot', mentionId: 'U2', displayName: 'bob' },
        ],
      },
      messageReference: { targetType: 'channel', targetId: 'C1' },
    });
  });

  it('bounds the body (413) and answers 404 for an unknown account', async () => {
    const { app } = await setup({ maxWebhookBytes: 1024 });
    const big = JSON.stringify({ op: 0, d: { content: 'x'.repeat(2000) } });
    const res = await post(app, big, signed(big));
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('QQBOT_PAYLOAD_TOO_LARGE');
    const unknown = await request(app).post('/api/qqbot/webhook/nobody').set('content-type', 'application/json').send('{}');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('QQBOT_ACCOUNT_NOT_FOUND');
  });

  it('limits log lines of requests anyone can send per minute and reports how many it left out', async () => {
    let now = Date.now();
    const { app, logs } = await setup({ now: () => now });
    const body = '{"op":0}';
    for (let i = 0; i < 25; i++) await post(app, body, { ...signed(body, Math.floor(now / 1000)), 'x-signature-ed25519': '0'.repeat(128) });
    expect(logs.filter((l) => l.includes('refused a webhook request'))).toHaveLength(20);
    now += 61_000;
    await post(app, body, { ...signed(body, Math.floor(now / 1000)), 'x-signature-ed25519': '0'.repeat(128) });
    expect(logs.some((l) => l.includes('5 more refused or validation requests were not logged'))).toBe(true);
    // Validation requests need no signature, so their lines share the budget.
    for (let i = 0; i < 25; i++)
      await post(app, '{"op":13,"d":{"plain_token":"abc","event_ts":"1"}}', { 'content-type': 'application/json' });
    expect(logs.filter((l) => l.includes('validation answered'))).toHaveLength(19);
  });
});
