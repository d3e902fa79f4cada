import { definePlugin } from '../define-plugin';
import { echoManifest } from '../manifests.spec-helper';
import { HandlerError, PluginMessageError, PluginSdkError } from '../errors';
import { at, composite, literal } from '../parts';
import { createTestHost } from './test-host';

const manifest = (over: Record<string, unknown> = {}) => ({ ...echoManifest, ...over });

const echo = definePlugin({
  manifest: manifest({ commands: [{ name: 'echo', aliases: ['e'], prefixes: ['/', '!'] }] }),
  commands: {
    async echo(ctx) {
      await ctx.replyMarkdown(ctx.at.user(ctx.sender), ' said: ', ctx.args);
    },
  },
  async onMessage(ctx) {
    await ctx.reply('seen: ', ctx.text);
  },
});

async function thrown(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('createTestHost: replies', () => {
  it('runs the command handler and renders the Markdown reply with a typed mention', async () => {
    const host = createTestHost(echo);
    const { ack, replies, command } = await host.send({ text: '/echo <b>hi</b> & bye', sender: { mentionId: 'u-1', displayName: 'Ann' } });
    expect(command).toEqual({ name: 'echo', word: 'echo', prefix: '/', args: '<b>hi</b> & bye' });
    expect(ack).toEqual({ eventId: 'test-event-1', accepted: true, intercepted: false, error: null });
    expect(replies).toEqual([
      {
        kind: 'reply',
        target: { type: 'group', id: 'test-group' },
        format: 'markdown',
        parts: [
          { type: 'mention', target: 'user', id: 'u-1', displayName: 'Ann' },
          { type: 'text', text: ' said: <b>hi</b> & bye' },
        ],
        body: { msg_type: 2, markdown: { content: '<qqbot-at-user id="u-1" /> said: <\u2060b>hi<\u2060/b> & bye' } },
        content: '<qqbot-at-user id="u-1" /> said: <\u2060b>hi<\u2060/b> & bye',
      },
    ]);
  });

  it('gives messages that match no command to onMessage, without a command', async () => {
    const { replies, command } = await createTestHost(echo).send('hello');
    expect(command).toBeUndefined();
    expect(replies.map((r) => r.body)).toEqual([{ msg_type: 0, content: 'seen: hello' }]);
  });

  it('shows literal() text as written in Markdown, next to Markdown of the plugin', async () => {
    const plugin = definePlugin({
      pluginId: 'com.example.t',
      onMessage: (ctx) => void ctx.replyMarkdown('**noted:** ', literal(ctx.text), ' ', ctx.literal('_x_')),
    });
    const { replies } = await createTestHost(plugin).send('[click](http://evil.example) ![i](y)');
    expect(replies[0]?.parts).toEqual([
      { type: 'text', text: '**noted:** ' },
      { type: 'text', text: '[click](http://evil.example) ![i](y)', literal: true },
      { type: 'text', text: ' ' },
      { type: 'text', text: '_x_', literal: true },
    ]);
    expect(replies[0]?.content).toBe('**noted:** \\[click\\]\\(http\\:\\/\\/evil\\.example\\) \\!\\[i\\]\\(y\\) \\_x\\_');
  });

  it("renders text mentions in a group as the platform's at-user tag, whatever the display name", async () => {
    const plugin = definePlugin({ pluginId: 'com.example.t', onMessage: (ctx) => void ctx.reply('hi ', at.users(ctx.sender, 'u-2')) });
    const { replies } = await createTestHost(plugin).send({ text: 'x', sender: { mentionId: 'u-1', displayName: 'A<b>' } });
    expect(replies[0]?.content).toBe('hi <qqbot-at-user id="u-1" /> <qqbot-at-user id="u-2" />');
  });

  it('refuses Markdown to a one-to-one chat with message.format.unsupported_target', async () => {
    let error: unknown;
    const plugin = definePlugin({
      pluginId: 'com.example.md',
      async onMessage(ctx) {
        error = await thrown(ctx.replyMarkdown('**hi**'));
      },
    });
    const { replies, ack, logs } = await createTestHost(plugin).send({ text: 'x', conversation: 'c2c' });
    expect(logs).toEqual([]); // the handler caught it: nothing to warn about
    expect(error).toBeInstanceOf(PluginMessageError);
    expect(error).toMatchObject({ code: 'message.format.unsupported_target', fromHost: false, target: { type: 'user', id: 'test-user' } });
    expect(replies).toEqual([]);
    expect(ack.accepted).toBe(true);
  });

  it('reports a refused message the handler did not catch as the completion error', async () => {
    const plugin = definePlugin({ pluginId: 'com.example.md', onMessage: (ctx) => ctx.reply(at.user(ctx.sender)).then(() => undefined) });
    const { ack, completion } = await createTestHost(plugin).send({ text: 'x', conversation: 'direct' });
    expect(ack).toMatchObject({ accepted: true, error: null });
    expect(completion).toMatchObject({ error: { code: 'message.mention.unsupported_target' } });
  });

  it('checks permissions declared in the manifest before sending', async () => {
    const errors: unknown[] = [];
    const plugin = definePlugin({
      manifest: manifest({ commands: [] }),
      async onMessage(ctx) {
        errors.push(await thrown(ctx.messages.group('g-2').send('hi')));
        errors.push(await thrown(ctx.reply(ctx.at.everyone(), ' wake up')));
      },
    });
    await createTestHost(plugin).send('x');
    expect(errors.map((e) => (e as PluginMessageError).code)).toEqual(['message.permission.denied', 'message.permission.denied']);
    expect((errors[0] as Error).message).toMatch(/"messages.send" permission/);
    expect((errors[1] as Error).message).toMatch(/messages.mentionEveryone/);
  });

  it('sends to other targets with messages.send and renders @everyone with its permission', async () => {
    const plugin = definePlugin({
      manifest: manifest({ commands: [], permissions: ['messages.reply', 'messages.send', 'messages.mentionEveryone'] }),
      async onMessage(ctx) {
        await ctx.messages.to({ type: 'channel', id: 'c-2' }).send(ctx.at.everyone(), ' news');
        await ctx.messages.user('u-9').send(composite('a', composite('b')), 'c');
        await ctx.messages.to({ type: 'group', id: 'g-3', botAccountId: 'other-bot' }).send('d');
      },
    });
    const { replies } = await createTestHost(plugin).send('x');
    // Inside a handler a send speaks as the event's bot unless the target names another.
    expect(replies.map((r) => [r.kind, r.target, r.body])).toEqual([
      ['send', { type: 'channel', id: 'c-2', botAccountId: 'test-bot' }, { msg_type: 0, content: '<qqbot-at-everyone /> news' }],
      ['send', { type: 'user', id: 'u-9', botAccountId: 'test-bot' }, { msg_type: 0, content: 'abc' }],
      ['send', { type: 'group', id: 'g-3', botAccountId: 'other-bot' }, { msg_type: 0, content: 'd' }],
    ]);
    expect(replies[1]?.parts).toEqual([{ type: 'text', text: 'abc' }]);
  });

  it('refuses a reply after the reply window closed', async () => {
    let error: unknown;
    const plugin = definePlugin({ pluginId: 'com.example.late', onMessage: async (ctx) => void (error = await thrown(ctx.reply('late'))) });
    await createTestHost(plugin).send({ text: 'x', replyWindowSeconds: -1 });
    expect(error).toMatchObject({ code: 'message.reference.expired' });
    expect((error as Error).message).toMatch(/ctx.messages.group\("test-group"\).send/);
  });

  it('waits for replies the handler did not await before completing', async () => {
    const plugin = definePlugin({
      pluginId: 'com.example.fire',
      onMessage(ctx) {
        void ctx.reply('one');
        void ctx.reply('');
      },
    });
    const host = createTestHost(plugin);
    const { replies, completion, logs } = await host.send('x');
    expect(replies.map((r) => r.content)).toEqual(['one']);
    expect(completion).toEqual({ error: null, durationMs: expect.any(Number) });
    expect(logs).toEqual([
      { level: 'warn', message: expect.stringMatching(/did not await failed: .*message has no content/), eventId: 'test-event-1' },
    ]);
  });

  it("names the handler's event in each line of its logger, and none in the plugin's own logger", async () => {
    const plugin = definePlugin({
      pluginId: 'com.example.logs',
      onStart: (ctx) => ctx.log.info('ready'),
      onMessage: (ctx) => ctx.log.info('answered', { sender: ctx.sender.mentionId }),
      onInteraction: (ctx) => ctx.log.warn('clicked'),
    });
    const host = createTestHost(plugin);
    const { logs } = await host.send('hi');
    expect(logs).toEqual([{ level: 'info', message: 'answered', fields: { sender: expect.any(String) }, eventId: 'test-event-1' }]);
    await host.click('vote:1');
    expect(host.logs).toEqual([
      { level: 'info', message: 'ready' },
      { level: 'info', message: 'answered', fields: { sender: expect.any(String) }, eventId: 'test-event-1' },
      { level: 'warn', message: 'clicked', eventId: expect.any(String) },
    ]);
    expect(host.logs[2]!.eventId).not.toBe('test-event-1');
  });

  it('refuses more than 20 users in one mention', () => {
    expect(() => at.users(...Array.from({ length: 21 }, (_, i) => `u${i}`))).toThrow(
      expect.objectContaining({ code: 'message.mention.too_many' }),
    );
    expect(() => at.users()).toThrow(PluginMessageError);
  });
});

describe('createTestHost: outcome', () => {
  it('reports a HandlerError with its code and details in the completion, after an accepting decision', async () => {
    const plugin = definePlugin({
      pluginId: 'com.example.fail',
      onMessage: () => Promise.reject(new HandlerError('weather.down', 'API down', { retryIn: 5 })),
    });
    const { ack, completion, logs } = await createTestHost(plugin).send('x');
    expect(ack).toEqual({ eventId: 'test-event-1', accepted: true, intercepted: false, error: null });
    expect(completion).toEqual({
      error: { code: 'weather.down', message: 'API down', details: { retryIn: 5 } },
      durationMs: expect.any(Number),
    });
    expect(logs[0]).toMatchObject({ level: 'error', fields: { code: 'weather.down' } });
  });

  it('reports any other throw as plugin.handler_failed', async () => {
    const plugin = definePlugin({
      pluginId: 'com.example.fail',
      onMessage: () => {
        throw new TypeError('x is undefined');
      },
    });
    expect((await createTestHost(plugin).send('x')).completion?.error).toEqual({
      code: 'plugin.handler_failed',
      message: 'x is undefined',
    });
  });

  it('does not accept an event no handler takes; nothing completes', async () => {
    const plugin = definePlugin({ manifest: manifest(), commands: { echo: () => undefined } });
    const delivery = await createTestHost(plugin).send('no command');
    expect([delivery.ack, delivery.completion]).toEqual([
      { eventId: 'test-event-1', accepted: false, intercepted: false, error: null },
      null,
    ]);
  });

  it('shows the decision before a slow handler finished, and the completion after', async () => {
    let finished = false;
    const plugin = definePlugin({
      pluginId: 'com.example.slow',
      async onMessage(ctx) {
        await new Promise((r) => setTimeout(r, 50));
        await ctx.reply('done');
        finished = true;
      },
    });
    const delivery = createTestHost(plugin).send('x');
    expect(await delivery.ack).toEqual({ eventId: 'test-event-1', accepted: true, intercepted: false, error: null });
    expect([finished, delivery.replies]).toEqual([false, []]);
    expect(await delivery.completed).toEqual({ error: null, durationMs: expect.any(Number) });
    expect(finished).toBe(true);
    expect((await delivery).replies.map((r) => r.content)).toEqual(['done']);
  });

  describe('a plugin that intercepts', () => {
    const interceptor = (onMessage: Parameters<typeof definePlugin>[0]['onMessage']) =>
      definePlugin({ pluginId: 'com.example.i', intercepts: true, onMessage });
    const later = () => new Promise((r) => setTimeout(r, 30));

    it('decides on ctx.intercept(), before its handler ends', async () => {
      const steps: string[] = [];
      const delivery = createTestHost(
        interceptor(async (ctx) => {
          ctx.intercept();
          await later();
          steps.push('handler ended');
        }),
      ).send('x');
      expect(await delivery.ack).toMatchObject({ accepted: true, intercepted: true });
      steps.push('acked');
      await delivery;
      expect(steps).toEqual(['acked', 'handler ended']);
    });

    it('decides on ctx.pass(), before its handler ends', async () => {
      const steps: string[] = [];
      const delivery = createTestHost(
        interceptor(async (ctx) => {
          ctx.pass();
          await later();
          steps.push('handler ended');
        }),
      ).send('x');
      expect(await delivery.ack).toMatchObject({ accepted: true, intercepted: false });
      steps.push('acked');
      expect((await delivery).completion?.error).toBeNull();
      expect(steps).toEqual(['acked', 'handler ended']);
    });

    it('decides when the handler returns without deciding', async () => {
      const { ack, completion } = await createTestHost(interceptor(() => undefined)).send('x');
      expect([ack.accepted, ack.intercepted, completion?.error]).toEqual([true, false, null]);
    });

    it('declines with the error when the handler throws before deciding', async () => {
      const { ack, completion } = await createTestHost(interceptor(() => Promise.reject(new HandlerError('i.broken', 'no')))).send('x');
      expect(ack).toEqual({ eventId: 'test-event-1', accepted: false, intercepted: false, error: { code: 'i.broken', message: 'no' } });
      expect(completion).toBeNull();
    });

    it('keeps an intercept when the handler throws after it; the error goes in the completion', async () => {
      const { ack, completion } = await createTestHost(
        interceptor((ctx) => {
          ctx.intercept();
          throw new HandlerError('i.late', 'after deciding');
        }),
      ).send('x');
      expect([ack.accepted, ack.intercepted, completion?.error?.code]).toEqual([true, true, 'i.late']);
    });

    it('refuses a second, different decision with SDK_DECISION_CONFLICT', async () => {
      const { ack, completion } = await createTestHost(
        interceptor((ctx) => {
          ctx.pass();
          ctx.pass();
          ctx.intercept();
        }),
      ).send('x');
      expect(ack.intercepted).toBe(false);
      expect(completion?.error?.code).toBe('SDK_DECISION_CONFLICT');
    });
  });

  it('refuses ctx.intercept() from a plugin that does not declare it; pass() is harmless', async () => {
    const no = definePlugin({
      pluginId: 'com.example.i',
      onMessage: (ctx) => {
        ctx.pass();
        ctx.intercept();
      },
    });
    const { ack, completion } = await createTestHost(no).send('x');
    expect(ack).toMatchObject({ accepted: true, intercepted: false, error: null });
    expect(completion?.error?.code).toBe('SDK_INTERCEPT_UNDECLARED');
  });

  it('cancels an event: aborts its ctx.signal with SDK_EVENT_CANCELLED, false once it ended', async () => {
    let reason: unknown;
    const plugin = definePlugin({
      pluginId: 'com.example.c',
      onMessage: (ctx) =>
        new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(void (reason = ctx.signal.reason)))),
    });
    const delivery = createTestHost(plugin).send('x');
    await delivery.ack;
    expect(delivery.cancel('ackTimeout')).toBe(true);
    expect((await delivery).completion?.error).toBeNull();
    expect(reason).toBeInstanceOf(PluginSdkError);
    expect(reason).toMatchObject({ code: 'SDK_EVENT_CANCELLED', message: expect.stringMatching(/test-event-1 was cancelled.*ackTimeout/) });
    expect(delivery.cancel()).toBe(false);
  });

  it('aborts ctx.signal when the handler deadline passes', async () => {
    const plugin = definePlugin({
      pluginId: 'com.example.d',
      onMessage: (ctx) => new Promise<void>((resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))),
    });
    const { completion } = await createTestHost(plugin, { handlerDeadlineMilliseconds: 20 }).send('x');
    expect(completion?.error).toMatchObject({ code: 'SDK_EVENT_CANCELLED', message: expect.stringMatching(/deadline passed/) });
  });

  it("on stop aborts each handler's signal and waits for it before onStop", async () => {
    const steps: string[] = [];
    const plugin = definePlugin({
      pluginId: 'com.example.s',
      onMessage: (ctx) =>
        new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(void steps.push('handler aborted')))),
      onStop: () => void steps.push('onStop'),
    });
    const host = createTestHost(plugin);
    const delivery = host.send('x');
    await delivery.ack;
    await host.stop();
    expect(steps).toEqual(['handler aborted', 'onStop']);
    expect((await delivery).completion?.error).toBeNull();
  });

  it('does not deliver events the subscriptions exclude', async () => {
    const plugin = definePlugin({
      manifest: manifest({ commands: [], eventSubscriptions: [{ eventType: 'message.created', conversationIds: ['room-1'] }] }),
      onMessage: (ctx) => void ctx.reply('hi'),
    });
    const host = createTestHost(plugin);
    expect((await host.send('x')).delivered).toBe(false);
    const inRoom = await host.send({ text: 'x', conversation: { conversationId: 'room-1' } });
    expect([inRoom.delivered, inRoom.replies.length]).toEqual([true, 1]);
  });

  it('passes settings with the manifest defaults, runs onStart once and onStop on stop', async () => {
    const seen: unknown[] = [];
    const plugin = definePlugin({
      manifest: manifest({
        commands: [],
        permissions: ['messages.reply', 'messages.send'],
        settings: {
          configSchema: { greeting: { type: 'string', label: 'Greeting', defaultValue: 'hi' }, apiKey: { type: 'secret', label: 'Key' } },
        },
      }),
      onStart: async (ctx) => void (await ctx.messages.group('g-1').send('started')),
      onMessage: (ctx) => void seen.push(ctx.settings),
      onStop: (ctx) => ctx.log.info('bye'),
    });
    const host = createTestHost(plugin, { settings: { apiKey: 'k' } });
    await host.send('a');
    await host.send('b');
    await host.stop();
    expect(seen).toEqual([
      { greeting: 'hi', apiKey: 'k' },
      { greeting: 'hi', apiKey: 'k' },
    ]);
    expect(host.sent.map((r) => r.content)).toEqual(['started']);
    // Outside a handler there is no event's bot to default to: the host picks (or asks for one).
    expect(host.sent[0]!.target).toEqual({ type: 'group', id: 'g-1' });
    expect(host.logs).toEqual([{ level: 'info', message: 'bye' }]);
  });

  it('validates a full event given to deliver()', async () => {
    await expect(createTestHost(echo).deliver({ eventId: '' } as never)).rejects.toThrow();
  });

  it('surfaces a wrong manifest given to the test host', () => {
    expect(() => createTestHost(echo, { manifest: { pluginId: 'com.example.echo', protocolVersion: 1 } })).toThrow(PluginSdkError);
  });
});
