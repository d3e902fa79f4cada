import { answeredDelivery, HostError, type Delivery, type OutboundSink, type PluginEndpoint, type PluginRouting } from '@host/host-core';
import { ConsoleProvider } from '@host/host-console';
import { Dispatcher } from '@host/host-dispatch';
import type { MessageEvent, OutgoingMessage } from '@host/protocol';
import { MediaGuard } from './media-guard';

/** An in-process plugin that answers every message with the replies it is given, and keeps what each one got back. */
class ReplyingPlugin implements PluginEndpoint {
  readonly pluginId = 'com.example.pics';
  readonly transport = 'http' as const;
  readonly answers: unknown[] = [];
  constructor(private readonly replies: OutgoingMessage[]) {}
  routing(): PluginRouting {
    return {
      pluginId: this.pluginId,
      eventSubscriptions: [{ eventType: 'message.created' }],
      commands: [],
      permissions: ['messages.reply'],
      canIntercept: false,
    };
  }
  isAvailable(): boolean {
    return true;
  }
  deliver(event: MessageEvent, sink: OutboundSink): Delivery {
    return answeredDelivery(
      (async () => {
        for (const message of this.replies) {
          this.answers.push(
            await sink.send({ pluginId: this.pluginId, kind: 'reply', eventId: event.eventId, message }).catch((e: HostError) => e.code),
          );
        }
        return { pluginId: this.pluginId, accepted: true, intercepted: false, error: null, durationMs: 1 };
      })(),
    );
  }
}

const image = (url: string): OutgoingMessage => ({ format: 'text', parts: [{ type: 'image', url }] });

/** A host's dispatch path as apps/host wires it: the media guard before the sink, its refusals recorded by the sink. */
function host(plugin: ReplyingPlugin, maxPerMinute?: number) {
  const guard = new MediaGuard({ policy: { allowLoopback: false, allowPrivate: false }, ...(maxPerMinute ? { maxPerMinute } : {}) });
  const dispatcher = new Dispatcher({
    endpoints: () => [plugin],
    outbound: (sink) => guard.wrap(sink, (request, error) => sink.noteRefusal(request, { code: error.code, message: error.message })),
  });
  const provider = new ConsoleProvider();
  dispatcher.providers.register(provider);
  const say = async () => {
    const record = await dispatcher.dispatch(
      provider.createEvent({ conversation: { type: 'group', id: 'g1' }, sender: { id: 'u1' }, text: 'hi' }),
    );
    return (await dispatcher.whenCompleted(record.eventId)) ?? record;
  };
  return { dispatcher, say };
}

describe("the media guard's refusals in the event log", () => {
  it('records an image the address policy refuses with the event it answered, with its code, and sends nothing', async () => {
    const plugin = new ReplyingPlugin([image('http://127.0.0.1:8080/a.png')]);
    const { dispatcher, say } = host(plugin);
    const record = await say();
    expect(plugin.answers).toEqual(['message.media.address_refused']);
    expect(record.outbound).toEqual([
      expect.objectContaining({
        pluginId: 'com.example.pics',
        kind: 'reply',
        eventId: record.eventId,
        target: { type: 'group', id: 'g1' },
        body: null,
        error: { code: 'message.media.address_refused', message: expect.stringContaining('http://127.0.0.1:8080/a.png') },
      }),
    ]);
    // GET /api/events answers from this log.
    expect(dispatcher.events.list({ limit: 1 })[0]!.outbound[0]!.error!.code).toBe('message.media.address_refused');
  });

  it('records the image over the per-minute limit as message.media.rate_limited beside the one that went out', async () => {
    const plugin = new ReplyingPlugin([image('https://1.1.1.1/a.png'), image('https://1.1.1.1/b.png')]);
    const { say } = host(plugin, 1);
    const record = await say();
    expect(plugin.answers).toEqual([expect.objectContaining({ accepted: true }), 'message.media.rate_limited']);
    expect(record.outbound.map((o) => [o.error?.code ?? null, (o.body as { msg_type?: number } | null)?.msg_type ?? null])).toEqual([
      [null, 7],
      ['message.media.rate_limited', null],
    ]);
  });

  it('records a messages.send the guard refuses as a send, with its code and target', async () => {
    const seen: { kind: string; code: string | undefined; target: unknown }[] = [];
    const guard = new MediaGuard({ policy: { allowLoopback: false, allowPrivate: false } });
    const dispatcher = new Dispatcher({
      endpoints: () => [],
      outbound: (sink) => guard.wrap(sink, (request, error) => sink.noteRefusal(request, { code: error.code, message: error.message })),
      observeOutbound: (_request, out) => seen.push({ kind: out.kind, code: out.error?.code, target: out.target }),
    });
    dispatcher.providers.register(new ConsoleProvider());
    const target = { type: 'group' as const, id: 'g1', botAccountId: 'console-bot' };
    await expect(
      dispatcher.outbound.send({ pluginId: 'com.example.pics', kind: 'send', target, message: image('http://10.0.0.1/a.png') }),
    ).rejects.toMatchObject({ code: 'message.media.address_refused' });
    expect(seen).toEqual([{ kind: 'send', code: 'message.media.address_refused', target }]);
  });

  it.each([
    [
      'a file part',
      { format: 'text', parts: [{ type: 'file', url: 'https://1.1.1.1/a.pdf', fileName: 'a.pdf' }] },
      'message.part.unsupported_target',
    ],
    [
      'an image with a keyboard',
      {
        format: 'markdown',
        parts: [{ type: 'image', url: 'https://1.1.1.1/a.png' }],
        keyboard: { rows: [{ buttons: [{ label: 'Go', style: 'secondary', action: 'callback', data: 'go', send: false }] }] },
      },
      'message.keyboard.unsupported_format',
    ],
    [
      'a keyboard on a text message',
      {
        format: 'text',
        parts: [{ type: 'text', text: 'x' }],
        keyboard: { rows: [{ buttons: [{ label: 'Go', style: 'secondary', action: 'callback', data: 'go', send: false }] }] },
      },
      'message.keyboard.unsupported_format',
    ],
    [
      'two images',
      {
        format: 'text',
        parts: [
          { type: 'image', url: 'https://1.1.1.1/a.png' },
          { type: 'image', url: 'https://1.1.1.1/b.png' },
        ],
      },
      'message.media.too_many',
    ],
  ] as [string, OutgoingMessage, string][])('records %s the renderer refuses with its code', async (_what, message, code) => {
    const plugin = new ReplyingPlugin([message]);
    const record = await host(plugin).say();
    expect(plugin.answers).toEqual([code]);
    expect(record.outbound.map((o) => o.error?.code)).toEqual([code]);
  });
});
