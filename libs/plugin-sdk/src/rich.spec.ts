import { echoManifest } from './manifests.spec-helper';
import { definePlugin } from './define-plugin';
import { PluginSdkError } from './errors';
import { callbackButton, commandButton, file, image, keyboard, linkButton } from './rich';
import { createTestHost } from './testing';

const manifest = (eventTypes: string[]) => ({ ...echoManifest, eventSubscriptions: eventTypes.map((eventType) => ({ eventType })) });

const voter = definePlugin({
  manifest: manifest(['message.created', 'interaction.created', 'bot.added', 'bot.removed']),
  async onMessage(ctx) {
    await ctx.replyMarkdown(
      '**Vote?**',
      keyboard().row(callbackButton('Yes', 'vote:yes', { style: 'primary' }), callbackButton('No', 'vote:no')),
    );
  },
  async onInteraction(ctx) {
    await ctx.reply(`${ctx.sender.mentionId} chose ${ctx.interaction.data}`, image.fromUrl('https://cdn.example.com/thanks.png'));
  },
  async onBotAdded(ctx) {
    await ctx.reply(`hello ${ctx.event.conversation.conversationId}`);
  },
  async onBotRemoved(ctx) {
    await ctx.reply('bye');
  },
});

describe('rich replies and the new events in the test kit', () => {
  it('sends a Markdown reply with a keyboard, rendered as the host renders it', async () => {
    const { replies } = await createTestHost(voter).send('hi');
    expect(replies[0]!.body).toEqual({
      msg_type: 2,
      markdown: { content: '**Vote?**' },
      keyboard: {
        content: {
          rows: [
            {
              buttons: [
                expect.objectContaining({ id: 'r0c0', action: expect.objectContaining({ type: 1, data: 'vote:yes' }) }),
                expect.objectContaining({ id: 'r0c1', render_data: { label: 'No', visited_label: 'No', style: 0 } }),
              ],
            },
          ],
        },
      },
    });
  });

  it('runs onInteraction for a click, with the button data, and answers with an image', async () => {
    const host = createTestHost(voter);
    const { delivered, ack, replies } = await host.click('vote:yes', { senderId: 'u-7', buttonId: 'r0c0' });
    expect(delivered).toBe(true);
    expect(ack).toMatchObject({ accepted: true });
    expect(replies).toEqual([
      expect.objectContaining({
        target: { type: 'group', id: 'test-group' },
        body: { msg_type: 7, content: 'u-7 chose vote:yes', media: { file_type: 1, url: 'https://cdn.example.com/thanks.png' } },
      }),
    ]);
  });

  it('runs onBotAdded and refuses a reply to bot.removed with message.reference.unavailable', async () => {
    const host = createTestHost(voter);
    const base = {
      timestamp: new Date().toISOString(),
      source: 'qqbot',
      bot: { botAccountId: 'b', platform: 'qqbot' },
      conversation: { type: 'group' as const, conversationId: 'G5' },
    };
    const added = await host.deliverEvent({
      ...base,
      eventId: 'e-added',
      eventType: 'bot.added',
      messageReference: { messageId: 'event:x', targetType: 'group', targetId: 'G5' },
    });
    expect(added.replies.map((r) => r.content)).toEqual(['hello G5']);
    const removed = await host.deliverEvent({ ...base, eventId: 'e-removed', eventType: 'bot.removed' });
    expect(removed.completion?.error).toMatchObject({ code: 'message.reference.unavailable' });
    expect(removed.replies).toEqual([]);
  });

  it('delivers nothing new to a plugin whose manifest does not subscribe to the type', async () => {
    const old = definePlugin({ manifest: manifest(['message.created']), onMessage: () => undefined });
    const { delivered, ack } = await createTestHost(old).click('x');
    expect(delivered).toBe(false);
    expect(ack.accepted).toBe(false);
  });

  it('refuses a handler for a type the manifest does not subscribe to', () => {
    const error = (() => {
      try {
        definePlugin({ manifest: manifest(['message.created']), onInteraction: () => undefined });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(PluginSdkError);
    expect((error as Error).message).toMatch(/"onInteraction" handles interaction.created events/);
  });

  it('checks keyboards and media before sending, with the host codes', async () => {
    const tooWide = definePlugin({
      manifest: manifest(['message.created']),
      async onMessage(ctx) {
        const row = Array.from({ length: 6 }, (_, i) => callbackButton(`b${i}`, `d${i}`));
        await ctx.replyMarkdown('x', keyboard().row(...row));
      },
    });
    const wide = await createTestHost(tooWide).send('go');
    expect(wide.completion?.error).toMatchObject({ code: 'message.keyboard.too_large' });
    const twoFiles = definePlugin({
      manifest: manifest(['message.created']),
      async onMessage(ctx) {
        await ctx.reply(image.fromUrl('https://a.example/1.png'), file.fromUrl('https://a.example/2.pdf', { fileName: '2.pdf' }));
      },
    });
    const two = await createTestHost(twoFiles).send('go');
    expect(two.completion?.error).toMatchObject({ code: 'message.media.too_many' });
  });

  it('builds the three kinds of button', () => {
    expect([linkButton('Docs', 'https://example.com'), commandButton('Help', '/help', { send: true })]).toEqual([
      { label: 'Docs', style: 'secondary', action: 'link', data: 'https://example.com', send: false },
      { label: 'Help', style: 'secondary', action: 'command', data: '/help', send: true },
    ]);
  });
});
