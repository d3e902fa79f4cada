import { echoManifest } from './manifests.spec-helper';
import type { MessageContext } from './context';
import { definePlugin } from './define-plugin';
import type { EventContext } from './rich';
import { createTestHost } from './testing';

// The names a message handler reads the event by (docs/protocol/v2.md 5.5): ctx.event, ctx.text and ctx.args, as
// the Python, Go and C# SDKs name them, and ctx.message kept as the deprecated name of ctx.event.
type Seen = Pick<MessageContext, 'event' | 'message' | 'text' | 'args' | 'command'>;

function recorder() {
  const seen: Seen[] = [];
  const keep = (ctx: MessageContext) =>
    void seen.push({ event: ctx.event, message: ctx.message, text: ctx.text, args: ctx.args, command: ctx.command });
  const plugin = definePlugin({
    manifest: { ...echoManifest, commands: [{ name: 'echo', aliases: ['e'], prefixes: ['/', '!'] }] },
    commands: { echo: keep },
    onMessage: keep,
  });
  return { plugin, seen };
}

describe('the message context names the event, its text and the command arguments', () => {
  it('gives a command handler the whole text as ctx.text and the text after the command word as ctx.args', async () => {
    const { plugin, seen } = recorder();
    const { command } = await createTestHost(plugin).send('!e   hi  there ');
    expect(seen).toHaveLength(1);
    const [ctx] = seen as [Seen];
    expect(ctx.text).toBe('!e   hi  there ');
    expect(ctx.args).toBe(command?.args);
    expect(ctx.args).toBe('hi  there ');
    expect(ctx.event.message.content).toBe('!e   hi  there ');
    expect(ctx.event.command).toEqual(command);
  });

  it('gives a message no command matched ctx.args "" and ctx.text its text', async () => {
    const { plugin, seen } = recorder();
    await createTestHost(plugin).send('just talking');
    expect(seen.map(({ text, args, command }) => ({ text, args, command }))).toEqual([
      { text: 'just talking', args: '', command: undefined },
    ]);
  });

  it('keeps ctx.message as the same event as ctx.event', async () => {
    const { plugin, seen } = recorder();
    await createTestHost(plugin).send('/echo x');
    expect(seen[0]!.message).toBe(seen[0]!.event);
    expect(seen[0]!.event.eventType).toBe('message.created');
  });

  it('gives the handler of another event type its own event and none of the message members', async () => {
    const contexts: EventContext[] = [];
    const plugin = definePlugin({
      manifest: { ...echoManifest, eventSubscriptions: [{ eventType: 'message.created' }, { eventType: 'interaction.created' }] },
      onMessage: () => undefined,
      onInteraction: (ctx) => void contexts.push(ctx),
    });
    await createTestHost(plugin).click('vote:yes');
    expect(contexts).toHaveLength(1);
    const ctx = contexts[0]! as EventContext & Partial<Record<'message' | 'text' | 'args' | 'command', unknown>>;
    expect(ctx.event.eventType).toBe('interaction.created');
    expect({ message: ctx.message, text: ctx.text, args: ctx.args, command: ctx.command }).toEqual({
      message: undefined,
      text: undefined,
      args: undefined,
      command: undefined,
    });
  });
});
