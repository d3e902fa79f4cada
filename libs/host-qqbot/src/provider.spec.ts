import { answeredDelivery, HostError, type OutboundSink, type PluginEndpoint, type PluginRouting } from '@host/host-core';
import { Dispatcher } from '@host/host-dispatch';
import type { MessageEvent, OutgoingMessage, Permission, SendResult, Target } from '@host/protocol';
import { QqBotAccounts } from './accounts';
import { QqBotProvider, messagePath, requestBody } from './provider';
import { FakeQqPlatform, WebhookSigner } from './testing';
import { QqBotWebhook } from './webhook';

/** A plugin in the test process that answers every event with one reply and keeps what the sink said. */
class ReplyingPlugin implements PluginEndpoint {
  readonly transport = 'http' as const;
  readonly results: (SendResult | HostError)[] = [];
  constructor(
    private readonly message: (e: MessageEvent) => OutgoingMessage,
    private readonly permissions: Permission[] = ['messages.reply'],
    readonly pluginId = 'com.example.replier',
    private readonly replies = 1,
  ) {}
  routing(): PluginRouting {
    return {
      pluginId: this.pluginId,
      eventSubscriptions: [{ eventType: 'message.created' }],
      commands: [],
      permissions: this.permissions,
      canIntercept: false,
    };
  }
  isAvailable(): boolean {
    return true;
  }
  deliver(event: MessageEvent, sink: OutboundSink) {
    const once = () =>
      sink.send({ pluginId: this.pluginId, kind: 'reply', eventId: event.eventId, message: this.message(event) }).then(
        (r) => void this.results.push(r),
        (e: HostError) => void this.results.push(e),
      );
    const reply = async () => {
      for (let i = 0; i < this.replies; i++) await once();
    };
    return answeredDelivery(
      reply().then(() => ({ pluginId: this.pluginId, accepted: true, intercepted: false, error: null, durationMs: 0 })),
    );
  }
}

const A = { id: 'a', appId: '1001', secret: 'secret-of-bot-a' };
const B = { id: 'b', appId: '1002', secret: 'secret-of-bot-b' };

describe('QqBotProvider', () => {
  it('builds paths and bodies per target type', () => {
    expect(messagePath({ type: 'group', id: 'G/1' })).toBe('/v2/groups/G%2F1/messages');
    expect(messagePath({ type: 'user', id: 'U1' })).toBe('/v2/users/U1/messages');
    expect(messagePath({ type: 'channel', id: 'C1' })).toBe('/channels/C1/messages');
    expect(() => messagePath({ type: 'direct', id: 'D1' })).toThrow(/direct targets/);
    const ctx = { eventId: 'e', messageId: 'm1', sequence: 2, botAccountId: 'a' };
    expect(requestBody({ type: 'group', id: 'G' }, { msg_type: 2, markdown: { content: 'x' } }, ctx)).toEqual({
      msg_type: 2,
      markdown: { content: 'x' },
      msg_id: 'm1',
      msg_seq: 2,
    });
    expect(requestBody({ type: 'channel', id: 'C' }, { msg_type: 0, content: 'x' }, ctx)).toEqual({ content: 'x', msg_id: 'm1' });
    expect(requestBody({ type: 'user', id: 'U' }, { msg_type: 0, content: 'x' }, undefined)).toEqual({ msg_type: 0, content: 'x' });
  });

  describe('the whole path in process: signed webhook, dispatcher, reply through the OpenAPI', () => {
    let pa: FakeQqPlatform;
    let pb: FakeQqPlatform;
    let accounts: QqBotAccounts;
    const closers: (() => Promise<void>)[] = [];

    beforeEach(async () => {
      pa = await FakeQqPlatform.start(A);
      pb = await FakeQqPlatform.start(B);
      accounts = new QqBotAccounts();
      await accounts.load([
        { ...A, apiBaseUrl: pa.apiBaseUrl, tokenUrl: pa.tokenUrl },
        { ...B, markdown: true, apiBaseUrl: pb.apiBaseUrl, tokenUrl: pb.tokenUrl },
      ]);
    });
    afterEach(async () => {
      for (const c of closers.splice(0)) await c();
      await accounts.close();
      await pa.close();
      await pb.close();
    });

    function host(plugin: ReplyingPlugin | ReplyingPlugin[], windows?: { groupMilliseconds: number }) {
      const dispatcher = new Dispatcher({ endpoints: () => [plugin].flat() });
      dispatcher.providers.register(new QqBotProvider(accounts));
      const records: Promise<unknown>[] = [];
      const webhook = new QqBotWebhook({
        accounts,
        accept: (e) => {
          const r = dispatcher.dispatch(e).then((rec) => dispatcher.whenCompleted(rec.eventId));
          records.push(r);
          return { accepted: true, durable: Promise.resolve(), routed: r };
        },
        log: () => undefined,
        ...(windows ? { replyWindows: { c2cMilliseconds: 60_000, channelMilliseconds: 60_000, ...windows } } : {}),
      });
      const signer = (account: typeof A) => {
        const s = new WebhookSigner({ secret: account.secret, appId: account.appId, webhookUrl: 'http://unused.invalid' });
        closers.push(() => s.close());
        return s;
      };
      const deliver = async (account: typeof A, payload: Record<string, unknown>) => {
        const s = signer(account);
        const body = Buffer.from(JSON.stringify(payload));
        const answer = await webhook.handle(account.id, s.sign(body.toString()), body);
        expect(answer).toEqual({ status: 200, body: { op: 12 } });
        await Promise.all(records);
      };
      return { dispatcher, deliver, signer };
    }

    it('answers a group @-message with a Markdown reply mentioning the sender, through the account that received it', async () => {
      const plugin = new ReplyingPlugin((e) => ({
        format: 'markdown',
        parts: [
          { type: 'mention', target: 'user', id: e.sender.mentionId },
          { type: 'text', text: ' **hi** <b>' },
        ],
      }));
      const { deliver, signer } = host(plugin);
      const payload = signer(B).groupAtMessage({ groupOpenId: 'GROUP_B', memberOpenId: 'MEMBER_7', content: 'hello' });
      await deliver(B, payload);
      expect(pa.messages).toHaveLength(0);
      expect(pb.messages.map((m) => m.body)).toEqual([
        {
          msg_type: 2,
          markdown: { content: '<qqbot-at-user id="MEMBER_7" /> **hi** <\u2060b>' },
          msg_id: (payload['d'] as { id: string }).id,
          msg_seq: 1,
        },
      ]);
      expect(pb.messages[0]!.path).toBe('/v2/groups/GROUP_B/messages');
      expect(plugin.results[0]).toEqual({ accepted: true, messageId: 'fake-msg-1', target: { type: 'group', id: 'GROUP_B' } });
    });

    it('numbers several replies to one message with increasing msg_seq', async () => {
      let n = 0;
      const plugin = new ReplyingPlugin(() => ({ format: 'text', parts: [{ type: 'text', text: `reply ${++n}` }] }));
      const twice: PluginEndpoint = {
        ...plugin,
        pluginId: plugin.pluginId,
        transport: 'http',
        routing: () => plugin.routing(),
        isAvailable: () => true,
        deliver: (event, sink) => {
          const send = () =>
            sink.send({
              pluginId: plugin.pluginId,
              kind: 'reply',
              eventId: event.eventId,
              message: { format: 'text', parts: [{ type: 'text', text: `r${++n}` }] },
            });
          return answeredDelivery(
            send()
              .then(send)
              .then(send)
              .then(() => ({ pluginId: plugin.pluginId, accepted: true, intercepted: false, error: null, durationMs: 0 })),
          );
        },
      };
      const dispatcher = new Dispatcher({ endpoints: () => [twice] });
      dispatcher.providers.register(new QqBotProvider(accounts));
      const s = new WebhookSigner({ secret: A.secret, appId: A.appId, webhookUrl: 'http://unused.invalid' });
      closers.push(() => s.close());
      const payload = s.c2cMessage({ userOpenId: 'USER_1', content: 'hi' });
      let done!: Promise<unknown>;
      const webhook = new QqBotWebhook({
        accounts,
        accept: (e) => ({
          accepted: true,
          durable: Promise.resolve(),
          routed: (done = dispatcher.dispatch(e).then((r) => dispatcher.whenCompleted(r.eventId))),
        }),
        log: () => undefined,
      });
      const body = Buffer.from(JSON.stringify(payload));
      await webhook.handle('a', s.sign(body.toString()), body);
      await done;
      expect(pa.messages.map((m) => [m.path, m.body['msg_seq'], m.body['content']])).toEqual([
        ['/v2/users/USER_1/messages', 1, 'r1'],
        ['/v2/users/USER_1/messages', 2, 'r2'],
        ['/v2/users/USER_1/messages', 3, 'r3'],
      ]);
    });

    it('gives the plugin message.reference.expired once the reply window closed, sending nothing', async () => {
      const plugin = new ReplyingPlugin(() => ({ format: 'text', parts: [{ type: 'text', text: 'late' }] }));
      const { deliver, signer } = host(plugin, { groupMilliseconds: -1000 });
      await deliver(A, signer(A).groupAtMessage({ groupOpenId: 'G', memberOpenId: 'M', content: 'x' }));
      expect(plugin.results[0]).toBeInstanceOf(HostError);
      expect((plugin.results[0] as HostError).code).toBe('message.reference.expired');
      expect(pa.messageCount).toBe(0);
    });

    it('refuses an active group or C2C message before calling the platform; a channel send and a send keyed to an event go out', async () => {
      const sender = new ReplyingPlugin(() => ({ format: 'text', parts: [] }), ['messages.send']);
      const withSender = new Dispatcher({ endpoints: () => [sender] });
      withSender.providers.register(new QqBotProvider(accounts));
      const send = (target: Target, eventId?: string) =>
        withSender.sink.send({
          pluginId: sender.pluginId,
          kind: 'send',
          target,
          ...(eventId ? { eventId } : {}),
          message: { format: 'text', parts: [{ type: 'text', text: 'daily report' }] },
        });
      for (const type of ['group', 'user'] as const) {
        await expect(send({ type, id: 'GROUP_9', botAccountId: 'b' })).rejects.toMatchObject({
          code: 'message.provider.active_unavailable',
        });
      }
      expect(pb.messageCount).toBe(0);
      const result = await send({ type: 'channel', id: 'CH_9', botAccountId: 'b' });
      expect(result).toEqual({ accepted: true, messageId: 'fake-msg-1', target: { type: 'channel', id: 'CH_9', botAccountId: 'b' } });
      expect(pb.messages.map((m) => [m.path, m.body])).toEqual([['/channels/CH_9/messages', { content: 'daily report' }]]);
      await expect(send({ type: 'group', id: 'GROUP_9', botAccountId: 'c' })).rejects.toMatchObject({
        code: 'message.target.bot_unknown',
        message: 'this host has no bot account "c"; its bot accounts are "a", "b"',
      });
      await expect(send({ type: 'group', id: 'GROUP_9' })).rejects.toMatchObject({ code: 'message.target.bot_required' });
      // An account removed after the host chose it: the provider says so itself.
      await expect(
        new QqBotProvider(accounts).send({ type: 'group', id: 'G', botAccountId: 'gone' }, { msg_type: 0, content: 'x' }),
      ).rejects.toMatchObject({ code: 'message.target.bot_unknown', message: 'QQ Bot account "gone" is not configured' });
      expect(withSender.providers.botAccountIds()).toEqual(['a', 'b']);
    });

    it('keys a messages.send from a handler to its event: to the same group it goes out as a reply (msg_id, next msg_seq)', async () => {
      const plugin = new ReplyingPlugin(
        () => ({ format: 'text', parts: [{ type: 'text', text: 'first' }] }),
        ['messages.reply', 'messages.send'],
      );
      const { deliver, signer, dispatcher } = host(plugin);
      const payload = signer(A).groupAtMessage({ groupOpenId: 'G_SEND', memberOpenId: 'M', content: 'x' });
      await deliver(A, payload);
      const eventId = dispatcher.events.list({ limit: 1 })[0]!.eventId;
      const sent = dispatcher.sink.send({
        pluginId: plugin.pluginId,
        kind: 'send',
        eventId,
        target: { type: 'group', id: 'G_SEND', botAccountId: 'a' },
        message: { format: 'text', parts: [{ type: 'text', text: 'second' }] },
      });
      await expect(sent).resolves.toMatchObject({ accepted: true });
      const d = payload['d'] as { id: string };
      expect(pa.messages.map((m) => m.body)).toEqual([
        { msg_type: 0, content: 'first', msg_id: d.id, msg_seq: 1 },
        { msg_type: 0, content: 'second', msg_id: d.id, msg_seq: 2 },
      ]);
    });

    it('refuses the sixth reply to one message locally, across plugins, with message.reference.reply_limit', async () => {
      const text = () => ({ format: 'text' as const, parts: [{ type: 'text' as const, text: 'x' }] });
      const first = new ReplyingPlugin(text, ['messages.reply'], 'com.example.first', 3);
      const second = new ReplyingPlugin(text, ['messages.reply'], 'com.example.second', 3);
      const { deliver, signer } = host([first, second]);
      await deliver(A, signer(A).groupAtMessage({ groupOpenId: 'G', memberOpenId: 'M', content: 'x' }));
      const all = [...first.results, ...second.results];
      expect(all.filter((r) => !(r instanceof HostError))).toHaveLength(5);
      const refused = all.filter((r): r is HostError => r instanceof HostError);
      expect(refused.map((e) => e.code)).toEqual(['message.reference.reply_limit']);
      expect(pa.messageCount).toBe(5);
    });

    it('refuses a reply numbered past the limit although this process sent none (the others went out through other replicas)', async () => {
      const provider = new QqBotProvider(accounts);
      const reply = (sequence: number) =>
        provider.send(
          { type: 'group', id: 'G_CLUSTER', botAccountId: 'a' },
          { msg_type: 0, content: 'x' },
          { eventId: 'e-cluster', messageId: 'm-cluster', sequence, botAccountId: 'a' },
        );
      await expect(reply(6)).rejects.toMatchObject({ code: 'message.reference.reply_limit', details: { maxReplies: 5 } });
      expect(pa.messageCount).toBe(0);
      await expect(reply(5)).resolves.toMatchObject({ requestBody: { msg_seq: 5, msg_id: 'm-cluster' } });
      expect(pa.messageCount).toBe(1);
    });

    it('maps the platform 22009 (replies used up) to message.reference.reply_limit, not a rate limit', async () => {
      const plugin = new ReplyingPlugin(() => ({ format: 'text', parts: [{ type: 'text', text: 'x' }] }));
      const { deliver, signer } = host(plugin);
      pa.failNext({ status: 400, body: { message: 'msg limit exceed', code: 22009, err_code: 22009, trace_id: 't' } });
      await deliver(A, signer(A).groupAtMessage({ groupOpenId: 'G', memberOpenId: 'M', content: 'x' }));
      expect(plugin.results[0]).toMatchObject({ code: 'message.reference.reply_limit', details: { providerCode: 22009 } });
    });

    it('sends Markdown as text for an account without the Markdown permission, and tells the plugin', async () => {
      const plugin = new ReplyingPlugin((e) => ({
        format: 'markdown',
        parts: [
          { type: 'mention', target: 'user', id: e.sender.mentionId },
          { type: 'text', text: ' **hi**' },
        ],
      }));
      const { deliver, signer } = host(plugin);
      await deliver(A, signer(A).groupAtMessage({ groupOpenId: 'G', memberOpenId: 'M_1', content: 'x' }));
      expect(plugin.results[0]).toMatchObject({ accepted: true, format: 'text' });
      expect(pa.messages.map((m) => [m.body['msg_type'], m.body['content']])).toEqual([[0, '<qqbot-at-user id="M_1" /> **hi**']]);
    });

    it('sends the same parts as text when the platform refuses Markdown (40034012) for an account that said it may', async () => {
      await pb.close();
      pb = await FakeQqPlatform.start({ ...B, markdownAllowed: false });
      await accounts.close();
      accounts = new QqBotAccounts();
      await accounts.load([
        { ...A, apiBaseUrl: pa.apiBaseUrl, tokenUrl: pa.tokenUrl },
        { ...B, markdown: true, apiBaseUrl: pb.apiBaseUrl, tokenUrl: pb.tokenUrl },
      ]);
      const plugin = new ReplyingPlugin(() => ({ format: 'markdown', parts: [{ type: 'text', text: '**hi**' }] }));
      const { deliver, signer } = host(plugin);
      await deliver(B, signer(B).groupAtMessage({ groupOpenId: 'G', memberOpenId: 'M', content: 'x' }));
      expect(plugin.results[0]).toMatchObject({ accepted: true, format: 'text' });
      expect(pb.messages.map((m) => m.body['content'])).toEqual(['**hi**']);
    });

    it('takes a retry the platform answers 40054005 (already delivered) as sent', async () => {
      const plugin = new ReplyingPlugin(() => ({ format: 'text', parts: [{ type: 'text', text: 'x' }] }));
      const { deliver, signer } = host(plugin);
      // The first attempt arrives, but its answer is a server error; the retry with the same msg_id and msg_seq is a duplicate.
      pa.failNext({ status: 502, body: {}, afterDelivery: true });
      await deliver(A, signer(A).groupAtMessage({ groupOpenId: 'G', memberOpenId: 'M', content: 'x' }));
      expect(plugin.results[0]).toMatchObject({ accepted: true });
      expect(pa.messageCount).toBe(1);
    });

    it('passes a platform rate limit to the plugin with the stable code and the platform code, recorded in the event log', async () => {
      const plugin = new ReplyingPlugin(() => ({ format: 'text', parts: [{ type: 'text', text: 'x' }] }));
      const { deliver, signer, dispatcher } = host(plugin);
      pa.failNext({ status: 429, body: { code: 20028, message: 'channel hit write rate limit' } });
      await deliver(A, signer(A).groupAtMessage({ groupOpenId: 'G', memberOpenId: 'M', content: 'x' }));
      const e = plugin.results[0] as HostError;
      expect(e.code).toBe('message.provider.rate_limited');
      expect(e.details).toMatchObject({ providerCode: 20028, httpStatus: 429 });
      const record = dispatcher.events.list({ limit: 1 })[0]!;
      expect(record.outbound[0]!.error).toMatchObject({ code: 'message.provider.rate_limited' });
    });
  });
});
