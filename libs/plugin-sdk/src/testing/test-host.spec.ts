import { definePlugin } from '../define-plugin';
import { echoManifest } from '../__fixtures__/manifests';
import { HandlerError, PluginMessageError, PluginSdkError } from '../errors';
import { at, composite } from '../parts';
import { createTestHost } from './test-host';

const manifest = (over: Record<string, unknown> = {}) => ({ ...echoManifest, ...over });

const echo = definePlugin({
  manifest: manifest({ commands: [{ name: 'echo', aliases: ['e'], prefixes: ['/', '!'] }] }),
  commands: {
    async echo(ctx) {
      await ctx.replyMarkdown(ctx.at.user(ctx.sender), ' said: ', ctx.command?.args ?? '');
    },
  },
  async onMessage(ctx) {
    await ctx.reply('seen: ', ctx.message.message.content);
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
        body: { msg_type: 2, markdown: { content: '<qqbot-at-user id="u-1" /> said: &lt;b&gt;hi&lt;/b&gt; &amp; bye' } },
        content: '<qqbot-at-user id="u-1" /> said: &lt;b&gt;hi&lt;/b&gt; &amp; bye',
      },
    ]);
  });

  it('gives messages that match no command to onMessage, without a command', async () => {
    const { replies, command } = await createTestHost(echo).send('hello');
    expect(command).toBeUndefined();
    expect(replies.map((r) => r.body)).toEqual([{ msg_type: 0, content: 'seen: hello' }]);
  });

  it('renders text mentions as @displayName, as the provider shows tags literally in text', async () => {
    const plugin = definePlugin({ pluginId: 'com.example.t', onMessage: (ctx) => void ctx.reply('hi ', at.users(ctx.sender, 'u-2')) });
    const { replies } = await createTestHost(plugin).send({ text: 'x', sender: { mentionId: 'u-1', displayName: 'A<b>' } });
    expect(replies[0]?.content).toBe('hi @A&lt;b&gt; @u-2');
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

  it('reports a refused message the handler did not catch as the ACK error', async () => {
    const plugin = definePlugin({ pluginId: 'com.example.md', onMessage: (ctx) => ctx.reply(at.user(ctx.sender)).then(() => undefined) });
    const { ack } = await createTestHost(plugin).send({ text: 'x', conversation: 'direct' });
    expect(ack).toMatchObject({ accepted: false, error: { code: 'message.mention.unsupported_target' } });
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
        await ctx.messages.group('g-2').sendMarkdown(ctx.at.everyone(), ' news');
        await ctx.messages.user('u-9').send(composite('a', composite('b')), 'c');
      },
    });
    const { replies } = await createTestHost(plugin).send('x');
    expect(replies.map((r) => [r.kind, r.target, r.body])).toEqual([
      ['send', { type: 'group', id: 'g-2' }, { msg_type: 2, markdown: { content: '<qqbot-at-everyone /> news' } }],
      ['send', { type: 'user', id: 'u-9' }, { msg_type: 0, content: 'abc' }],
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

  it('waits for replies the handler did not await before acknowledging', async () => {
    const plugin = definePlugin({
      pluginId: 'com.example.fire',
      onMessage(ctx) {
        void ctx.reply('one');
        void ctx.reply('');
      },
    });
    const host = createTestHost(plugin);
    const { replies, ack, logs } = await host.send('x');
    expect(replies.map((r) => r.content)).toEqual(['one']);
    expect(ack.accepted).toBe(true);
    expect(logs).toEqual([{ level: 'warn', message: expect.stringMatching(/did not await failed: .*message has no content/) }]);
  });

  it('refuses more than 20 users in one mention', () => {
    expect(() => at.users(...Array.from({ length: 21 }, (_, i) => `u${i}`))).toThrow(expect.objectContaining({ code: 'message.mention.too_many' }));
    expect(() => at.users()).toThrow(PluginMessageError);
  });
});

describe('createTestHost: outcome', () => {
  it('reports a HandlerError with its code and details', async () => {
    const plugin = definePlugin({ pluginId: 'com.example.fail', onMessage: () => Promise.reject(new HandlerError('weather.down', 'API down', { retryIn: 5 })) });
    const { ack, logs } = await createTestHost(plugin).send('x');
    expect(ack).toEqual({ eventId: 'test-event-1', accepted: false, intercepted: false, error: { code: 'weather.down', message: 'API down', details: { retryIn: 5 } } });
    expect(logs[0]).toMatchObject({ level: 'error', fields: { code: 'weather.down' } });
  });

  it('reports any other throw as plugin.handler_failed', async () => {
    const plugin = definePlugin({ pluginId: 'com.example.fail', onMessage: () => { throw new TypeError('x is undefined'); } });
    expect((await createTestHost(plugin).send('x')).ack.error).toEqual({ code: 'plugin.handler_failed', message: 'x is undefined' });
  });

  it('does not accept an event no handler takes', async () => {
    const plugin = definePlugin({ manifest: manifest(), commands: { echo: () => undefined } });
    expect((await createTestHost(plugin).send('no command')).ack).toMatchObject({ accepted: false, error: null });
  });

  it('marks the event intercepted only for plugins that declare it', async () => {
    const yes = definePlugin({ pluginId: 'com.example.i', intercepts: true, onMessage: (ctx) => ctx.intercept() });
    expect((await createTestHost(yes).send('x')).ack.intercepted).toBe(true);
    const no = definePlugin({ pluginId: 'com.example.i', onMessage: (ctx) => ctx.intercept() });
    const { ack } = await createTestHost(no).send('x');
    expect(ack).toMatchObject({ accepted: false, intercepted: false, error: { code: 'SDK_INTERCEPT_UNDECLARED' } });
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
        settings: { configSchema: { greeting: { type: 'string', label: 'Greeting', defaultValue: 'hi' }, apiKey: { type: 'secret', label: 'Key' } } },
      }),
      onStart: async (ctx) => void (await ctx.messages.group('g-1').send('started')),
      onMessage: (ctx) => void seen.push(ctx.settings),
      onStop: (ctx) => ctx.log.info('bye'),
    });
    const host = createTestHost(plugin, { settings: { apiKey: 'k' } });
    await host.send('a');
    await host.send('b');
    await host.stop();
    expect(seen).toEqual([{ greeting: 'hi', apiKey: 'k' }, { greeting: 'hi', apiKey: 'k' }]);
    expect(host.sent.map((r) => r.content)).toEqual(['started']);
    expect(host.logs).toEqual([{ level: 'info', message: 'bye' }]);
  });

  it('validates a full event given to deliver()', async () => {
    await expect(createTestHost(echo).deliver({ eventId: '' } as never)).rejects.toThrow();
  });

  it('surfaces a wrong manifest given to the test host', () => {
    expect(() => createTestHost(echo, { manifest: { pluginId: 'com.example.echo', protocolVersion: 1 } })).toThrow(PluginSdkError);
  });
});
