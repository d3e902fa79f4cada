import { HostError } from '@host/host-core';
import { QqBotApiClient, retryAfterMilliseconds, type QqBotApiClientOptions } from './openapi-client';
import {
  ACCEPTED_FOR_REVIEW_PLATFORM_CODES,
  ACCOUNT_PLATFORM_CODES,
  ACTIVE_UNAVAILABLE_PLATFORM_CODES,
  DUPLICATE_PLATFORM_CODES,
  MARKDOWN_REFUSED_PLATFORM_CODES,
  RATE_LIMIT_PLATFORM_CODES,
  REPLY_EXPIRED_PLATFORM_CODES,
  REPLY_LIMIT_PLATFORM_CODES,
  REPLY_REFUSED_PLATFORM_CODES,
  RETRY_ONCE_PLATFORM_CODES,
  TOKEN_PLATFORM_CODES,
} from './platform-errors';
import { FakeQqPlatform } from './testing';

const APP = { appId: '102000001', secret: 'fake-secret-0123' };

describe('QqBotApiClient against the fake platform', () => {
  let platform: FakeQqPlatform;
  const clients: QqBotApiClient[] = [];
  const sleeps: number[] = [];

  beforeEach(async () => {
    platform = await FakeQqPlatform.start(APP);
    sleeps.length = 0;
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await platform.close();
  });

  function client(o: Partial<QqBotApiClientOptions> = {}): QqBotApiClient {
    const c = new QqBotApiClient({
      ...APP,
      apiBaseUrl: platform.apiBaseUrl,
      tokenUrl: platform.tokenUrl,
      sleep: async (ms) => void sleeps.push(ms),
      ...o,
    });
    clients.push(c);
    return c;
  }

  const reply = (seq: number) => ({ msg_type: 0, content: `hello ${seq}`, msg_id: 'm-1', msg_seq: seq });

  async function failure(p: Promise<unknown>): Promise<HostError> {
    const e = await p.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(HostError);
    return e as HostError;
  }

  it('sends with the token header and the app id, fetching the token once for many sends', async () => {
    const c = client();
    const results = await Promise.all([1, 2, 3].map((seq) => c.post('/v2/groups/G1/messages', reply(seq), true)));
    expect(results.map((r) => r.id)).toEqual(expect.arrayContaining(['fake-msg-1', 'fake-msg-2', 'fake-msg-3']));
    expect(platform.tokenRequests).toBe(1);
    const token = await c.accessToken();
    expect(platform.messages.map((m) => m.authorization)).toEqual([`QQBot ${token}`, `QQBot ${token}`, `QQBot ${token}`]);
    expect(platform.messages[0]!.unionAppId).toBe(APP.appId);
  });

  it('renews the token shortly before it expires', async () => {
    let now = 1_000_000;
    const c = client({ now: () => now, refreshMarginMilliseconds: 60_000 });
    await c.post('/v2/groups/G1/messages', reply(1), true);
    now += 7200_000 - 61_000;
    await c.post('/v2/groups/G1/messages', reply(2), true);
    expect(platform.tokenRequests).toBe(1);
    now += 2_000;
    await c.post('/v2/groups/G1/messages', reply(3), true);
    expect(platform.tokenRequests).toBe(2);
  });

  it('fetches a new token once when the platform refuses the cached one (expired tokens)', async () => {
    const c = client();
    await c.post('/v2/groups/G1/messages', reply(1), true);
    platform.expireTokens();
    await c.post('/v2/groups/G1/messages', reply(2), true);
    expect(platform.tokenRequests).toBe(2);
    expect(platform.messageCount).toBe(2);
  });

  it('gives message.provider.auth_failed when a fresh token is refused too, without looping', async () => {
    const c = client();
    platform.failNext({ status: 401, body: { code: 11244, message: 'token not exist or expire' } }, 2);
    const e = await failure(c.post('/v2/groups/G1/messages', reply(1), true));
    expect(e.code).toBe('message.provider.auth_failed');
    expect(e.details).toMatchObject({ httpStatus: 401, providerCode: 11244 });
    expect(platform.tokenRequests).toBe(2);
  });

  it('gives message.provider.auth_failed for a wrong secret, with the platform code', async () => {
    const c = client({ secret: 'wrong-secret-000' });
    const e = await failure(c.post('/v2/groups/G1/messages', reply(1), true));
    expect(e.code).toBe('message.provider.auth_failed');
    expect(e.details).toMatchObject({ providerCode: 100016 });
    expect(e.message).not.toContain('wrong-secret-000');
  });

  it('retries a passive reply after platform 5xx answers, with backoff', async () => {
    const c = client();
    platform.failNext({ status: 502, body: { code: 500, message: 'bad gateway' } }, 2);
    const r = await c.post('/v2/groups/G1/messages', reply(1), true);
    expect(r.id).toBe('fake-msg-1');
    // 250 ms, then 500 ms, each less up to a fifth at random.
    expect(sleeps).toHaveLength(2);
    expect(sleeps[0]).toBeGreaterThanOrEqual(200);
    expect(sleeps[0]).toBeLessThanOrEqual(250);
    expect(sleeps[1]).toBeGreaterThanOrEqual(400);
    expect(sleeps[1]).toBeLessThanOrEqual(500);
  });

  it('gives message.provider.unavailable after the retries, keeping the platform status and code', async () => {
    const c = client();
    platform.failNext({ status: 503, body: { code: 5003, message: 'busy' } }, 3);
    const e = await failure(c.post('/v2/groups/G1/messages', reply(1), true));
    expect(e.code).toBe('message.provider.unavailable');
    expect(e.details).toMatchObject({ httpStatus: 503, providerCode: 5003, retries: 2 });
    expect(platform.messageCount).toBe(0);
  });

  it('never retries an active message after a 5xx: it could arrive twice', async () => {
    const c = client();
    platform.failNext({ status: 500, body: {} });
    const e = await failure(c.post('/v2/groups/G1/messages', { msg_type: 0, content: 'hi' }, false));
    expect(e.code).toBe('message.provider.unavailable');
    expect(sleeps).toEqual([]);
  });

  it('gives message.provider.unavailable when the platform cannot be reached', async () => {
    const c = client({ apiBaseUrl: 'http://127.0.0.1:1', maxRetries: 1 });
    const e = await failure(c.post('/v2/groups/G1/messages', reply(1), true));
    expect(e.code).toBe('message.provider.unavailable');
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThanOrEqual(200);
    expect(sleeps[0]).toBeLessThanOrEqual(250);
  });

  it('waits out a short Retry-After of a 429 once, then sends', async () => {
    const c = client();
    platform.failNext({ status: 429, body: { code: 20028, message: 'channel hit write rate limit' }, headers: { 'retry-after': '1' } });
    await c.post('/v2/groups/G1/messages', reply(1), true);
    expect(sleeps).toEqual([1000]);
    expect(platform.messageCount).toBe(1);
  });

  it('gives message.provider.rate_limited with the platform code for a rate limit it should not wait for', async () => {
    const c = client();
    platform.failNext({ status: 429, body: { code: 20028, message: 'channel hit write rate limit' }, headers: { 'retry-after': '30' } });
    let e = await failure(c.post('/v2/groups/G1/messages', reply(1), true));
    expect(e.code).toBe('message.provider.rate_limited');
    expect(e.details).toMatchObject({ httpStatus: 429, providerCode: 20028, retryAfterMilliseconds: 30_000 });
    // A rate-limit code in a 4xx answer without 429.
    platform.failNext({ status: 400, body: { code: 304045, message: 'reply limit' } });
    e = await failure(c.post('/v2/groups/G1/messages', reply(1), true));
    expect(e.code).toBe('message.provider.rate_limited');
    expect(e.details).toMatchObject({ httpStatus: 400, providerCode: 304045 });
    expect(sleeps).toEqual([]);
  });

  it('gives message.provider.rejected for other refusals, with the platform code and message', async () => {
    const c = client();
    await c.post('/v2/groups/G1/messages', reply(1), true);
    const e = await failure(c.post('/v2/groups/G1/messages', reply(1), true));
    expect(e.code).toBe('message.provider.rejected');
    expect(e.details).toMatchObject({ httpStatus: 400, providerCode: 40054005, providerMessage: '消息被去重，请检查请求msgseq' });
  });

  describe('codes from the platform documentation', () => {
    it('repeats a call once after a failed platform check, even an active message, and not twice', async () => {
      const c = client();
      platform.failNext({ status: 500, body: { code: 11252, message: 'check app privilege failed' } });
      const r = await c.post('/channels/C1/messages', { content: 'hi' }, false);
      expect(r.id).toBe('fake-msg-1');
      platform.failNext({ status: 500, body: { code: 11242, message: 'check token failed' } }, 2);
      const e = await failure(c.post('/channels/C1/messages', { content: 'again' }, false));
      expect(e.code).toBe('message.provider.unavailable');
      expect(e.details).toMatchObject({ providerCode: 11242, retries: 0 });
      expect(platform.messageCount).toBe(1);
      expect(sleeps).toEqual([]);
    });

    it('gives message.reference.expired when the platform says the answered message is too old', async () => {
      const c = client();
      platform.failNext({ status: 400, body: { code: 304027, message: 'msg expire' } });
      const e = await failure(c.post('/v2/groups/G1/messages', reply(1), true));
      expect(e.code).toBe('message.reference.expired');
      expect(e.details).toMatchObject({ httpStatus: 400, providerCode: 304027 });
    });

    it('gives message.provider.auth_failed, naming the problem, when the bot account itself is refused', async () => {
      const c = client();
      platform.failNext({ status: 403, body: { code: 11265, message: 'robot has baned' } });
      const e = await failure(c.post('/v2/groups/G1/messages', reply(1), true));
      expect(e.code).toBe('message.provider.auth_failed');
      expect(e.message).toContain('the bot is banned');
      expect(e.details).toMatchObject({ providerCode: 11265 });
      expect(platform.tokenRequests).toBe(1);
    });

    it('takes a 202 answer held for review as accepted, without a message id', async () => {
      const c = client();
      platform.failNext({ status: 202, body: { code: 304024, message: 'reply msg async ok, wait for audit' } });
      expect(await c.post('/v2/groups/G1/messages', reply(1), true)).toEqual({ id: '' });
    });

    it('maps documented rate-limit codes in any 4xx answer to message.provider.rate_limited', async () => {
      const c = client();
      for (const code of [1100100, 304049, 20028]) {
        platform.failNext({ status: 400, body: { code, message: 'limited' } });
        const e = await failure(c.post('/v2/groups/G1/messages', reply(1), true));
        expect([code, e.code]).toEqual([code, 'message.provider.rate_limited']);
      }
    });

    it('says where every code of its tables comes from', () => {
      const tables = [
        RATE_LIMIT_PLATFORM_CODES,
        TOKEN_PLATFORM_CODES,
        RETRY_ONCE_PLATFORM_CODES,
        ACCOUNT_PLATFORM_CODES,
        REPLY_EXPIRED_PLATFORM_CODES,
        ACCEPTED_FOR_REVIEW_PLATFORM_CODES,
        REPLY_REFUSED_PLATFORM_CODES,
        REPLY_LIMIT_PLATFORM_CODES,
        ACTIVE_UNAVAILABLE_PLATFORM_CODES,
        DUPLICATE_PLATFORM_CODES,
        MARKDOWN_REFUSED_PLATFORM_CODES,
      ];
      const all = tables.flatMap((t) => [...t.values()]);
      // No code is in two tables, and the ones the documentation does not list are few and named.
      expect(new Set(all.map((c) => c.code)).size).toBe(all.length);
      expect(all.filter((c) => c.source === 'observed').map((c) => c.code)).toEqual([
        11244, 304103, 40034005, 40034026, 40034024, 40034025, 40034027, 40034128, 40034102, 40034105, 40054005, 40034012,
      ]);
    });
  });

  describe('answers of the v2 message API, as public captures show them', () => {
    const refusal = (code: number, message: string) => ({ status: 400, body: { message, code, err_code: code, trace_id: 'd233ffd4' } });

    it.each([
      [40034005, '回复消息msg_id已过期', 'message.reference.expired'],
      [40034024, '请求参数msg_id无效或越权', 'message.reference.refused'],
      [40034027, '该事件不支持回复消息', 'message.reference.refused'],
      [22009, 'msg limit exceed', 'message.reference.reply_limit'],
      [40034102, '主动消息失败, 无权限', 'message.provider.active_unavailable'],
    ])('maps %d (%s) to %s, without retrying', async (code, message, expected) => {
      const c = client();
      platform.failNext(refusal(code, message));
      const e = await failure(c.post('/v2/groups/G1/messages', reply(1), true));
      expect(e.code).toBe(expected);
      expect(e.details).toMatchObject({ httpStatus: 400, providerCode: code, providerMessage: message, traceId: 'd233ffd4' });
      expect(sleeps).toEqual([]);
    });

    it('fetches a new token once for 11244 (token expired) and sends', async () => {
      const c = client();
      await c.accessToken();
      platform.failNext({ status: 401, body: { code: 11244, message: 'token not exist or expire' } });
      expect((await c.post('/v2/groups/G1/messages', reply(1), true)).id).toBe('fake-msg-1');
      expect(platform.tokenRequests).toBe(2);
    });

    it('takes 40054005 after an attempt that may have arrived as delivered, and as a refusal otherwise', async () => {
      const c = client();
      platform.failNext({ status: 502, body: {}, afterDelivery: true });
      expect(await c.post('/v2/groups/G1/messages', reply(1), true)).toEqual({ id: '', alreadyDelivered: true });
      expect(platform.messageCount).toBe(1);
      const e = await failure(c.post('/v2/groups/G1/messages', reply(1), true));
      expect([e.code, e.details?.['providerCode']]).toEqual(['message.provider.rejected', 40054005]);
    });

    it('takes 40054005 as delivered at the first attempt of a reply an earlier process may have sent (sentBefore)', async () => {
      const c = client();
      // The earlier process's attempt reached the platform; it stopped before marking the reply sent.
      expect((await c.post('/v2/groups/G1/messages', reply(1), true)).id).toBe('fake-msg-1');
      expect(await c.post('/v2/groups/G1/messages', reply(1), true, true)).toEqual({ id: '', alreadyDelivered: true });
      expect(platform.messageCount).toBe(1);
      // Never for an active message, which the platform does not deduplicate by msg_seq.
      const e = await failure(c.post('/v2/groups/G1/messages', reply(1), false, true));
      expect([e.code, e.details?.['providerCode']]).toEqual(['message.provider.rejected', 40054005]);
    });

    it('marks a Markdown refusal (40034012) so the provider can send text', async () => {
      const c = client();
      platform.failNext(refusal(40034012, '不允许发送原生 markdown'));
      const e = await failure(
        c.post('/v2/groups/G1/messages', { msg_type: 2, markdown: { content: '**x**' }, msg_id: 'm-1', msg_seq: 1 }, true),
      );
      expect(e.code).toBe('message.provider.rejected');
      expect(e.details).toMatchObject({ markdownRefused: true, providerCode: 40034012 });
    });
  });

  it('reads Retry-After as seconds or a date', () => {
    expect(retryAfterMilliseconds('2')).toBe(2000);
    expect(retryAfterMilliseconds(undefined)).toBeUndefined();
    expect(retryAfterMilliseconds('soon')).toBeUndefined();
    expect(retryAfterMilliseconds(new Date(Date.now() + 60_000).toUTCString())).toBeGreaterThan(55_000);
  });
});
