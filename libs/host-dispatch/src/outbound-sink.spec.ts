import type { OutboundRequest, PluginEndpoint } from '@host/host-core';
import type { OutgoingMessage } from '@host/protocol';
import { Dispatcher } from './dispatcher';
import { InProcessPlugin, KeepingProvider, makeEvent } from './in-process.spec-helper';

const text = (t: string, format: 'text' | 'markdown' = 'text'): OutgoingMessage => ({ format, parts: [{ type: 'text', text: t }] });

async function setup(permissions: string[], event = makeEvent('/cmd')) {
  const plugin = new InProcessPlugin('com.a.plugin', { permissions });
  const plugins: PluginEndpoint[] = [plugin];
  const provider = new KeepingProvider();
  let now = Date.now();
  const dispatcher = new Dispatcher({ endpoints: () => plugins, now: () => now });
  dispatcher.providers.register(provider);
  const record = await dispatcher.dispatch(event);
  const send = (req: Partial<OutboundRequest>) =>
    dispatcher.sink.send({
      pluginId: 'com.a.plugin',
      kind: 'reply',
      eventId: record.eventId,
      message: text('hi'),
      ...req,
    } as OutboundRequest);
  return { dispatcher, provider, record, send, advance: (ms: number) => (now += ms) };
}

describe('HostOutboundSink', () => {
  it('renders a reply for the provider and numbers replies to one event', async () => {
    const { send, provider, record } = await setup(['messages.reply']);
    const first = await send({
      message: {
        format: 'markdown',
        parts: [
          { type: 'mention', target: 'user', id: 'user-1' },
          { type: 'text', text: ' <i>' },
        ],
      },
    });
    await send({});
    expect(first).toEqual({ accepted: true, messageId: 'out-1', target: { type: 'group', id: 'group-1' } });
    expect(provider.sent.map((s) => s.body)).toEqual([
      { msg_type: 2, markdown: { content: '<qqbot-at-user id="user-1" /> <\u2060i>' }, msg_id: record.event.message.id, msg_seq: 1 },
      { msg_type: 0, content: 'hi', msg_id: record.event.message.id, msg_seq: 2 },
    ]);
    expect(record.outbound.map((o) => o.messageId)).toEqual(['out-1', 'out-2']);
  });

  it('refuses a reply without messages.reply, naming the permission, and records the refusal with the event', async () => {
    const { send, record } = await setup([]);
    await expect(send({})).rejects.toMatchObject({ code: 'message.permission.denied', details: { permission: 'messages.reply' } });
    expect(record.outbound).toEqual([
      expect.objectContaining({
        pluginId: 'com.a.plugin',
        kind: 'reply',
        body: null,
        error: expect.objectContaining({ code: 'message.permission.denied' }),
      }),
    ]);
  });

  it('refuses @everyone without messages.mentionEveryone, in the event log too', async () => {
    const { send, record } = await setup(['messages.reply']);
    const message: OutgoingMessage = {
      format: 'markdown',
      parts: [{ type: 'composite', parts: [{ type: 'mention', target: 'everyone' }] }],
    };
    await expect(send({ message })).rejects.toMatchObject({ details: { permission: 'messages.mentionEveryone' } });
    expect(record.outbound.map((o) => [o.error?.code, o.target])).toEqual([
      ['message.permission.denied', { type: 'group', id: 'group-1' }],
    ]);
  });

  it('refuses a reply to an event the plugin did not get', async () => {
    const { send } = await setup(['messages.reply']);
    await expect(send({ eventId: 'no-such-event' })).rejects.toMatchObject({ code: 'message.reference.unknown' });
    await expect(send({ pluginId: 'com.other' })).rejects.toMatchObject({ code: 'message.permission.denied' });
  });

  it('refuses a reply after the reply window and records it', async () => {
    const event = makeEvent('/cmd');
    event.messageReference.replyUntil = new Date(Date.now() + 1000).toISOString();
    const { send, advance, record } = await setup(['messages.reply'], event);
    advance(2000);
    await expect(send({})).rejects.toMatchObject({ code: 'message.reference.expired' });
    expect(record.outbound[0]).toMatchObject({ body: null, error: { code: 'message.reference.expired' } });
  });

  it('returns rendering refusals with their message.* code', async () => {
    const event = makeEvent('/cmd', {
      conversation: { type: 'c2c', conversationId: 'u' },
      messageReference: { messageId: 'm', targetType: 'user', targetId: 'u', restrictions: [] },
    });
    const { send } = await setup(['messages.reply'], event);
    await expect(send({ message: text('**x**', 'markdown') })).rejects.toMatchObject({ code: 'message.format.unsupported_target' });
  });

  it('sends through the only bot account of the host when the target names none', async () => {
    const { send, provider } = await setup(['messages.send']);
    const result = await send({ kind: 'send', eventId: undefined, target: { type: 'channel', id: 'c1' } });
    expect(result.target).toEqual({ type: 'channel', id: 'c1', botAccountId: 'bot-1' });
    expect(provider.sent[0]!.body).toEqual({ msg_type: 0, content: 'hi' });
  });

  describe('routing of messages.send by bot account', () => {
    async function twoProviders() {
      const ctx = await setup(['messages.send']);
      const other = new KeepingProvider('qqbot', ['qq-a', 'qq-b']);
      ctx.dispatcher.providers.register(other);
      return { ...ctx, other };
    }

    it('sends through the provider of the named bot account and echoes it', async () => {
      const { send, provider, other } = await twoProviders();
      const result = await send({ kind: 'send', eventId: undefined, target: { type: 'group', id: 'g9', botAccountId: 'qq-b' } });
      expect(result).toEqual({ accepted: true, messageId: 'out-1', target: { type: 'group', id: 'g9', botAccountId: 'qq-b' } });
      expect(other.sent).toEqual([{ target: { type: 'group', id: 'g9', botAccountId: 'qq-b' }, body: { msg_type: 0, content: 'hi' } }]);
      expect(provider.sent).toEqual([]);
    });

    it('refuses an unknown bot account, naming the ones the host has, and logs the refusal', async () => {
      const { send, dispatcher } = await twoProviders();
      const seen: unknown[] = [];
      dispatcher.events.subscribe((change) => seen.push(change));
      await expect(
        send({ kind: 'send', eventId: undefined, target: { type: 'group', id: 'g9', botAccountId: 'qq-z' } }),
      ).rejects.toMatchObject({
        code: 'message.target.bot_unknown',
        message: 'this host has no bot account "qq-z"; its bot accounts are "bot-1", "qq-a", "qq-b"',
        details: { botAccountId: 'qq-z', botAccountIds: ['bot-1', 'qq-a', 'qq-b'] },
      });
      expect(seen).toContainEqual(
        expect.objectContaining({
          type: 'send',
          outbound: expect.objectContaining({ error: expect.objectContaining({ code: 'message.target.bot_unknown' }) }),
        }),
      );
    });

    it('refuses a send that names no bot when several could send', async () => {
      const { send } = await twoProviders();
      await expect(send({ kind: 'send', eventId: undefined, target: { type: 'group', id: 'g9' } })).rejects.toMatchObject({
        code: 'message.target.bot_required',
        details: { botAccountIds: ['bot-1', 'qq-a', 'qq-b'] },
      });
    });

    it('takes the bot of the event a send answers (an HTTP response) when the target names none', async () => {
      const { send, provider, other, record } = await twoProviders();
      const result = await send({ kind: 'send', eventId: record.eventId, target: { type: 'group', id: 'g9' } });
      expect(result.target).toEqual({ type: 'group', id: 'g9', botAccountId: 'bot-1' });
      expect(provider.sent).toHaveLength(1);
      expect(other.sent).toEqual([]);
    });

    it("links a send to the event it names when that event was delivered to the sender; another plugin's or an unknown event is ignored", async () => {
      // com.b.plugin subscribes to nothing: the event is com.a.plugin's only.
      const a = new InProcessPlugin('com.a.plugin', { permissions: ['messages.send'] });
      const b = new InProcessPlugin('com.b.plugin', { permissions: ['messages.send'], eventSubscriptions: [] });
      const dispatcher = new Dispatcher({ endpoints: () => [a, b] });
      const provider = new KeepingProvider();
      dispatcher.providers.register(provider);
      dispatcher.providers.register(new KeepingProvider('qqbot', ['qq-a', 'qq-b']));
      const record = await dispatcher.dispatch(makeEvent('/cmd'));
      expect(b.received).toEqual([]);
      const seen: { type: string; outbound?: { pluginId: string; eventId?: string; error: unknown } }[] = [];
      dispatcher.events.subscribe((change) => change.type === 'send' && seen.push(change));
      const send = (pluginId: string, eventId: string, target: OutboundRequest['target']) =>
        dispatcher.sink.send({ pluginId, kind: 'send', eventId, target, message: text('hi') });

      // The sender's own event: its bot sends, and the send is streamed with the event's id.
      expect((await send('com.a.plugin', record.eventId, { type: 'group', id: 'g9' })).target.botAccountId).toBe('bot-1');
      // Another plugin's event neither picks the bot (three could send) nor links the send, refused or not.
      await expect(send('com.b.plugin', record.eventId, { type: 'group', id: 'g9' })).rejects.toMatchObject({
        code: 'message.target.bot_required',
      });
      await send('com.b.plugin', record.eventId, { type: 'group', id: 'g9', botAccountId: 'qq-a' });
      // An id the host never delivered is ignored the same way: the send still goes out.
      await send('com.a.plugin', 'no-such-event', { type: 'group', id: 'g9', botAccountId: 'qq-b' });
      expect(seen.map((u) => [u.type, u.outbound?.pluginId, u.outbound?.eventId ?? null, u.outbound?.error ? 'refused' : 'sent'])).toEqual([
        ['send', 'com.a.plugin', record.eventId, 'sent'],
        ['send', 'com.b.plugin', null, 'refused'],
        ['send', 'com.b.plugin', null, 'sent'],
        ['send', 'com.a.plugin', null, 'sent'],
      ]);
      // Sends stay out of the event's record (its replies), linked or not.
      expect(record.outbound).toEqual([]);
    });

    it('says so when the host has no bot account at all', async () => {
      const plugin = new InProcessPlugin('com.a.plugin', { permissions: ['messages.send'] });
      const dispatcher = new Dispatcher({ endpoints: () => [plugin] });
      dispatcher.providers.register(new KeepingProvider('qqbot', []));
      await expect(
        dispatcher.sink.send({ pluginId: 'com.a.plugin', kind: 'send', target: { type: 'group', id: 'g' }, message: text('hi') }),
      ).rejects.toMatchObject({ code: 'message.target.invalid', details: { botAccountIds: [] } });
    });
  });

  it('says when no provider can send', async () => {
    const event = makeEvent('/cmd', { source: 'onebot' });
    const { send } = await setup(['messages.reply'], event);
    await expect(send({})).rejects.toMatchObject({
      code: 'message.target.invalid',
      message: expect.stringContaining('no message provider "onebot"'),
    });
  });

  it('records a message the provider refused, and passes the failure on', async () => {
    const plugin = new InProcessPlugin('com.a.plugin', { permissions: ['messages.reply'] });
    const dispatcher = new Dispatcher({ endpoints: () => [plugin] });
    // A provider whose service is down: its send rejects, as a network client would.
    dispatcher.providers.register({
      id: 'console',
      renderer: 'qqbot',
      botAccountIds: () => ['bot-1'],
      send: async () => {
        throw new Error('provider answered 503');
      },
    });
    const record = await dispatcher.dispatch(makeEvent('/cmd'));
    const request: OutboundRequest = { pluginId: 'com.a.plugin', kind: 'reply', eventId: record.eventId, message: text('hi') };
    await expect(dispatcher.sink.send(request)).rejects.toThrow('provider answered 503');
    expect(dispatcher.events.get(record.eventId)!.outbound).toEqual([
      expect.objectContaining({
        pluginId: 'com.a.plugin',
        body: { msg_type: 0, content: 'hi' },
        error: { code: 'delivery.provider_failed', message: 'provider answered 503' },
      }),
    ]);
  });

  it('accepts a reply to an event more than a full event log ago while its reply window is open', async () => {
    const event = makeEvent('/cmd');
    event.messageReference.replyUntil = new Date(Date.now() + 5 * 60_000).toISOString();
    const { dispatcher, send, advance, provider, record } = await setup(['messages.reply'], event);
    // 1,200 events later (2.4 s at 500 events/s) the event log no longer shows the first one.
    for (let i = 0; i < 1200; i++) await dispatcher.dispatch(makeEvent('/cmd'));
    advance(3300);
    expect(dispatcher.events.get(record.eventId)).toBeUndefined();
    expect(await send({})).toMatchObject({ accepted: true, target: { type: 'group', id: 'group-1' } });
    expect(await send({})).toMatchObject({ accepted: true });
    expect(provider.sent.map((s) => (s.body as { msg_id: string; msg_seq: number }).msg_seq)).toEqual([1, 2]);
    expect(provider.sent[0]!.body).toMatchObject({ msg_id: record.event.message.id });
    // The window still closes.
    advance(5 * 60_000);
    await expect(send({})).rejects.toMatchObject({ code: 'message.reference.expired' });
  });

  it('streams a reply to an event the log no longer keeps as an outbound message of no record', async () => {
    const { dispatcher, send } = await setup(['messages.reply']);
    let last: Awaited<ReturnType<typeof dispatcher.dispatch>> | undefined;
    for (let i = 0; i < 1001; i++) last = await dispatcher.dispatch(makeEvent('/other'));
    await dispatcher.whenCompleted(last!.eventId);
    const updates: unknown[] = [];
    dispatcher.events.subscribe((u) => updates.push(u));
    await send({});
    expect(updates).toEqual([
      { type: 'send', outbound: expect.objectContaining({ kind: 'reply', pluginId: 'com.a.plugin', messageId: 'out-1', error: null }) },
    ]);
  });
});
