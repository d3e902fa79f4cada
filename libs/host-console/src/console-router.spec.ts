import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { answeredDelivery, chatEventOf, type Delivery, type OutboundSink, type PluginEndpoint, type PluginRouting } from '@host/host-core';
import { Dispatcher } from '@host/host-dispatch';
import { CommandSchema, type ChatEvent, type MessageEvent, type OutgoingMessageInput } from '@host/protocol';
import { ConsoleProvider } from './console-provider';
import { consoleRoutes, createConsoleRouter } from './console-router';
import {
  ADMIN_ROUTES,
  ConsoleMessageResponseSchema,
  ConsoleStreamDataSchema,
  declaredErrorCodes,
  ErrorBodySchema,
  EventListResponseSchema,
  routeKey,
  type RouteContract,
} from '@host/admin-api';

/** An in-process echo plugin: replies to /echo before acknowledging, and again later when asked. */
class EchoPlugin implements PluginEndpoint {
  readonly pluginId = 'com.example.echo';
  readonly transport = 'http' as const;
  routing(): PluginRouting {
    return {
      pluginId: this.pluginId,
      eventSubscriptions: [{ eventType: 'message.created' }],
      commands: [CommandSchema.parse({ name: 'echo' }), CommandSchema.parse({ name: 'later' })],
      permissions: ['messages.reply'],
      canIntercept: false,
    };
  }
  isAvailable(): boolean {
    return true;
  }
  deliver(event: MessageEvent, sink: OutboundSink): Delivery {
    return answeredDelivery(this.answer(event, sink));
  }
  private async answer(event: MessageEvent, sink: OutboundSink) {
    const reply = (text: string) =>
      sink.send({
        pluginId: this.pluginId,
        kind: 'reply',
        eventId: event.eventId,
        message: {
          format: 'markdown',
          parts: [
            { type: 'mention', target: 'user', id: event.sender.mentionId },
            { type: 'text', text },
          ],
        },
      });
    if (event.command?.name === 'echo') await reply(` ${event.command.args}`);
    if (event.command?.name === 'later') setTimeout(() => void reply(' later'), 30);
    return { pluginId: this.pluginId, accepted: true, intercepted: false, error: null, durationMs: 1 };
  }
}

/**
 * An in-process plugin subscribed to every event type but messages: it records what it got and answers a click
 * with a text and an image, /file-like data with a file, and the other types with a greeting.
 */
class EventsPlugin implements PluginEndpoint {
  readonly pluginId = 'com.example.events';
  readonly transport = 'http' as const;
  readonly got: ChatEvent[] = [];
  routing(): PluginRouting {
    return {
      pluginId: this.pluginId,
      eventSubscriptions: [
        { eventType: 'interaction.created' },
        { eventType: 'bot.added' },
        { eventType: 'bot.removed' },
        { eventType: 'conversation.opened' },
      ],
      commands: [],
      permissions: ['messages.reply'],
      canIntercept: false,
    };
  }
  isAvailable(): boolean {
    return true;
  }
  deliver(event: MessageEvent, sink: OutboundSink): Delivery {
    return answeredDelivery(this.answer(event, sink));
  }
  private async answer(event: MessageEvent, sink: OutboundSink) {
    const chat = chatEventOf(event)!;
    this.got.push(chat);
    const message: OutgoingMessageInput =
      chat.interaction?.data === 'file'
        ? { parts: [{ type: 'file', url: 'https://example.com/a.pdf', fileName: 'a.pdf' }] }
        : chat.interaction
          ? {
              parts: [
                { type: 'text', text: `chose ${chat.interaction.data}` },
                { type: 'image', url: 'https://example.com/a.png' },
              ],
            }
          : { parts: [{ type: 'text', text: `hello after ${chat.eventType}` }] };
    // A refused reply is the plugin's error, as messages.reply answers it; the event log records it either way.
    const error = await sink.send({ pluginId: this.pluginId, kind: 'reply', eventId: event.eventId, message: message as never }).then(
      () => null,
      (e: { code: string; message: string }) => ({ code: e.code, message: e.message }),
    );
    return { pluginId: this.pluginId, accepted: true, intercepted: false, error, durationMs: 1 };
  }
}

function app(events = new EventsPlugin()) {
  const provider = new ConsoleProvider();
  const dispatcher = new Dispatcher({ endpoints: () => [new EchoPlugin(), events] });
  dispatcher.providers.register(provider);
  const a = express();
  a.use('/api', createConsoleRouter({ dispatcher, provider, maxWaitMilliseconds: 1000, heartbeatMilliseconds: 50 }));
  return { app: a, dispatcher };
}

const body = (text: string, extra: object = {}) => ({
  conversation: { type: 'group', id: 'grp' },
  sender: { id: 'u-1', displayName: 'Ann' },
  text,
  ...extra,
});

describe('POST /api/console/messages', () => {
  it('answers with the deliveries and the exact QQ Bot bodies', async () => {
    const res = await request(app().app).post('/api/console/messages').send(body('/echo <b>hi</b>'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      eventId: expect.any(String),
      completed: true,
      deliveries: [
        {
          pluginId: 'com.example.echo',
          state: 'completed',
          accepted: true,
          intercepted: false,
          error: null,
          completion: { at: expect.any(String), error: null, durationMs: expect.any(Number) },
        },
      ],
      outbound: [
        {
          pluginId: 'com.example.echo',
          target: { type: 'group', id: 'grp' },
          body: {
            msg_type: 2,
            markdown: { content: '<qqbot-at-user id="u-1" /> <\u2060b>hi<\u2060/b>' },
            msg_id: 'console-in-1',
            msg_seq: 1,
          },
          messageId: 'console-out-1',
        },
      ],
      refused: [],
    });
  });

  it('collects replies sent after the ACK for waitMs', async () => {
    const { app: a } = app();
    expect((await request(a).post('/api/console/messages').send(body('/later'))).body.outbound).toEqual([]);
    const res = await request(a)
      .post('/api/console/messages')
      .send(body('/later', { waitMs: 200 }));
    expect(res.body.outbound).toHaveLength(1);
  });

  it.each([
    [{ text: 'x' }, 'conversation'],
    [body('x', { conversation: { type: 'channel', id: 'c' } }), 'conversation.type'],
    [body('x', { sender: { id: 'has space' } }), 'sender.id'],
    [body('x', { waitMs: 5000 }), 'waitMs'],
    [body('x', { extra: true }), 'extra'],
  ])('refuses %j naming %s', async (payload, path) => {
    const res = await request(app().app).post('/api/console/messages').send(payload);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(res.body.error.details.issues.map((d: { path: string }) => d.path)).toContain(path);
  });
});

describe('POST /api/console/chat-events', () => {
  const click = (data: string, extra: object = {}) => ({
    eventType: 'interaction.created',
    conversation: { type: 'group', id: 'grp' },
    sender: { id: 'u-2', displayName: 'Bo' },
    interaction: { data, buttonId: 'yes', messageId: 'console-out-1' },
    ...extra,
  });

  it('delivers a click to the plugins subscribed to interaction.created only, and answers with the reply by the event id', async () => {
    const events = new EventsPlugin();
    const res = await request(app(events).app).post('/api/console/chat-events').send(click('vote:yes'));
    expect(res.status).toBe(200);
    expect(ConsoleMessageResponseSchema.safeParse(res.body).error).toBeUndefined();
    expect(res.body.deliveries.map((d: { pluginId: string }) => d.pluginId)).toEqual(['com.example.events']);
    expect(events.got).toEqual([
      expect.objectContaining({
        eventType: 'interaction.created',
        source: 'console',
        conversation: { type: 'group', conversationId: 'grp', groupOpenId: 'grp' },
        sender: { provider: 'console', mentionId: 'u-2', memberOpenId: 'u-2', displayName: 'Bo' },
        interaction: { id: expect.stringMatching(/^console-event-\d+$/), data: 'vote:yes', buttonId: 'yes', messageId: 'console-out-1' },
        messageReference: expect.objectContaining({ targetType: 'group', targetId: 'grp' }),
      }),
    ]);
    // An image goes out as QQ Bot's rich-media message, answering the click by its event id.
    expect(res.body.outbound).toEqual([
      {
        pluginId: 'com.example.events',
        target: { type: 'group', id: 'grp' },
        body: {
          msg_type: 7,
          content: 'chose vote:yes',
          media: { file_type: 1, url: 'https://example.com/a.png' },
          event_id: events.got[0]!.interaction!.id,
          msg_seq: 1,
        },
        messageId: expect.stringMatching(/^console-out-\d+$/),
      },
    ]);
  });

  it("refuses a part QQ Bot cannot carry with the renderer's code, as QQ Bot would", async () => {
    const res = await request(app().app).post('/api/console/chat-events').send(click('file'));
    expect(res.body.outbound).toEqual([]);
    expect(res.body.refused).toEqual([
      {
        pluginId: 'com.example.events',
        target: { type: 'group', id: 'grp' },
        error: { code: 'message.part.unsupported_target', message: expect.stringContaining('file') },
      },
    ]);
  });

  it.each(['bot.added', 'conversation.opened'])('delivers %s with a reference its greeting answers', async (eventType) => {
    const events = new EventsPlugin();
    const res = await request(app(events).app)
      .post('/api/console/chat-events')
      .send({ eventType, conversation: { type: 'c2c', id: 'u-3' }, sender: { id: 'u-3' } });
    expect(events.got[0]).toMatchObject({ eventType, conversation: { type: 'c2c', conversationId: 'u-3' }, sender: { mentionId: 'u-3' } });
    expect(events.got[0]!.interaction).toBeUndefined();
    expect(res.body.outbound[0].body).toEqual({
      msg_type: 0,
      content: `hello after ${eventType}`,
      event_id: expect.any(String),
      msg_seq: 1,
    });
  });

  it('delivers bot.removed without a reference: a reply is refused with message.reference.unavailable', async () => {
    const events = new EventsPlugin();
    const res = await request(app(events).app)
      .post('/api/console/chat-events')
      .send({ eventType: 'bot.removed', conversation: { type: 'group', id: 'grp' }, sender: { id: 'u-1' } });
    expect(events.got[0]!.messageReference).toBeUndefined();
    expect(res.body.outbound).toEqual([]);
    expect(res.body.refused.map((r: { error: { code: string } }) => r.error.code)).toEqual(['message.reference.unavailable']);
  });

  it('records the event with the copy the plugins got, without a raw payload, in GET /api/events', async () => {
    const { app: a } = app();
    await request(a).post('/api/console/chat-events').send(click('vote:no'));
    const listed = await request(a).get('/api/events');
    expect(EventListResponseSchema.safeParse(listed.body).error).toBeUndefined();
    expect(listed.body.events[0].event.chatEvent).toMatchObject({ eventType: 'interaction.created', interaction: { data: 'vote:no' } });
  });

  it.each([
    [click('x', { interaction: undefined }), 'interaction'],
    [{ ...click('x'), eventType: 'bot.added' }, 'interaction'],
    [click('x'.repeat(513)), 'interaction.data'],
    [click(''), 'interaction.data'],
    [click('x', { interaction: { data: 'x', buttonId: 'has space' } }), 'interaction.buttonId'],
    [click('x', { eventType: 'message.created' }), 'eventType'],
    [click('x', { sender: { id: '<b>' } }), 'sender.id'],
    [click('x', { waitMs: 5000 }), 'waitMs'],
    [click('x', { extra: 1 }), 'extra'],
  ])('refuses %j naming %s, delivering nothing', async (payload, path) => {
    const events = new EventsPlugin();
    const res = await request(app(events).app).post('/api/console/chat-events').send(payload);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(res.body.error.details.issues.map((d: { path: string }) => d.path)).toContain(path);
    expect(events.got).toEqual([]);
  });
});

describe('console event stream and list', () => {
  it('streams the records of new events as Server-Sent Events', async () => {
    const { app: a } = app();
    const server = a.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const { port } = server.address() as AddressInfo;
    const abort = new AbortController();
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/console/events`, { signal: abort.signal });
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const reader = res.body!.getReader();
      await fetch(`http://127.0.0.1:${port}/api/console/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body('/echo hi')),
      });
      let text = '';
      while (!text.includes('event: completed')) text += new TextDecoder().decode((await reader.read()).value);
      const completed = text.split('\n\n').find((b) => b.startsWith('event: completed'))!;
      const data = JSON.parse(completed.split('\ndata: ')[1]!);
      expect(ConsoleStreamDataSchema.safeParse(data).success).toBe(true);
      expect(data.record.outbound[0].body.msg_type).toBe(2);
      expect(data.record.event.message.content).toBe('/echo hi');
    } finally {
      abort.abort();
      server.close();
    }
  });

  it('lists recent records, newest first, by plugin', async () => {
    const { app: a } = app();
    await request(a).post('/api/console/messages').send(body('first'));
    await request(a).post('/api/console/messages').send(body('second'));
    const res = await request(a).get('/api/events?pluginId=com.example.echo&limit=1');
    expect(res.body.events.map((e: { event: MessageEvent }) => e.event.message.content)).toEqual(['second']);
  });
});

describe('console routes and their contracts', () => {
  const options = () => {
    const provider = new ConsoleProvider();
    return { dispatcher: new Dispatcher({ endpoints: () => [] }), provider };
  };

  it('implement the console contracts of the admin API, nothing more', () => {
    const routes = consoleRoutes(options());
    const contracts = [
      ADMIN_ROUTES.sendConsoleMessage,
      ADMIN_ROUTES.sendConsoleChatEvent,
      ADMIN_ROUTES.consoleEvents,
      ADMIN_ROUTES.listEvents,
    ];
    expect(routes.map(routeKey)).toEqual(contracts.map(routeKey));
    for (const r of routes) {
      const contract = contracts.find((c) => routeKey(c) === routeKey(r))!;
      expect({ errors: r.errors, responses: r.responses, body: r.body, query: r.query }).toEqual({
        errors: contract.errors,
        responses: contract.responses,
        body: contract.body,
        query: contract.query,
      });
      expect(r.handler).toEqual(expect.any(Function));
    }
  });

  it('answer with the documented response schemas', async () => {
    const { app: a } = app();
    const sent = await request(a).post('/api/console/messages').send(body('/echo hi'));
    expect(ConsoleMessageResponseSchema.safeParse(sent.body).error).toBeUndefined();
    const listed = await request(a).get('/api/events');
    expect(EventListResponseSchema.safeParse(listed.body).error).toBeUndefined();
    expect(listed.body.events).toHaveLength(1);
  });

  /** A failure, with a code the route's contract declares. */
  const expectDeclared = (res: request.Response, contract: RouteContract, code: string) => {
    expect(res.status).toBe(400);
    expect(ErrorBodySchema.safeParse(res.body).success).toBe(true);
    expect(res.body.error.code).toBe(code);
    expect(declaredErrorCodes(contract)).toContain(code);
  };

  it.each([
    ['an invalid body', 'post', '/api/console/messages', ADMIN_ROUTES.sendConsoleMessage],
    ['an invalid chat event', 'post', '/api/console/chat-events', ADMIN_ROUTES.sendConsoleChatEvent],
    ['a negative history', 'get', '/api/console/events?history=-1', ADMIN_ROUTES.consoleEvents],
    ['a history that is not a number', 'get', '/api/console/events?history=all', ADMIN_ROUTES.consoleEvents],
    ['a zero limit', 'get', '/api/events?limit=0', ADMIN_ROUTES.listEvents],
    ['a limit that is not a number', 'get', '/api/events?limit=ten', ADMIN_ROUTES.listEvents],
  ] as const)('refuse %s with BAD_REQUEST, a declared code', async (_label, method, path, contract) => {
    const r = request(app().app)[method](path);
    expectDeclared(await (method === 'post' ? r.send({ text: 1 }) : r), contract, 'BAD_REQUEST');
  });

  it('refuse a message nested deeper than an event may be with REQUEST_JSON_TOO_COMPLEX, dispatching nothing', async () => {
    const { app: a, dispatcher } = app();
    const nested = JSON.stringify(body('/echo hi')).replace(/}$/, `,"extra":${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}}`);
    const res = await request(a).post('/api/console/messages').set('content-type', 'application/json').send(nested);
    expectDeclared(res, ADMIN_ROUTES.sendConsoleMessage, 'REQUEST_JSON_TOO_COMPLEX');
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/deeper than 32 levels/);
    expect(dispatcher.events.list()).toEqual([]);
  });

  it('refuse a body that is not JSON with BAD_REQUEST', async () => {
    const res = await request(app().app).post('/api/console/messages').set('content-type', 'application/json').send('{"text": ');
    expectDeclared(res, ADMIN_ROUTES.sendConsoleMessage, 'BAD_REQUEST');
  });
});
