import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { answeredDelivery, type Delivery, type OutboundSink, type PluginEndpoint, type PluginRouting } from '@host/host-core';
import { Dispatcher } from '@host/host-dispatch';
import { CommandSchema, type MessageEvent } from '@host/protocol';
import { ConsoleProvider } from './console-provider';
import { createConsoleRouter } from './console-router';

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
        message: { format: 'markdown', parts: [{ type: 'mention', target: 'user', id: event.sender.mentionId }, { type: 'text', text }] },
      });
    if (event.command?.name === 'echo') await reply(` ${event.command.args}`);
    if (event.command?.name === 'later') setTimeout(() => void reply(' later'), 30);
    return { pluginId: this.pluginId, accepted: true, intercepted: false, error: null, durationMs: 1 };
  }
}

function app() {
  const provider = new ConsoleProvider();
  const dispatcher = new Dispatcher({ endpoints: () => [new EchoPlugin()], defaultProvider: provider.id });
  dispatcher.providers.register(provider);
  const a = express();
  a.use('/api', createConsoleRouter({ dispatcher, provider, maxWaitMilliseconds: 1000, heartbeatMilliseconds: 50 }));
  return { app: a, dispatcher };
}

const body = (text: string, extra: object = {}) => ({ conversation: { type: 'group', id: 'grp' }, sender: { id: 'u-1', displayName: 'Ann' }, text, ...extra });

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
          body: { msg_type: 2, markdown: { content: '<qqbot-at-user id="u-1" /> &lt;b&gt;hi&lt;/b&gt;' }, msg_id: 'console-in-1', msg_seq: 1 },
        },
      ],
      refused: [],
    });
  });

  it('collects replies sent after the ACK for waitMs', async () => {
    const { app: a } = app();
    expect((await request(a).post('/api/console/messages').send(body('/later'))).body.outbound).toEqual([]);
    const res = await request(a).post('/api/console/messages').send(body('/later', { waitMs: 200 }));
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
