import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import express, { type Response } from 'express';
import { EventLog, type Dispatcher } from '@host/host-dispatch';
import { ConsoleProvider } from './console-provider';
import { createConsoleRouter } from './console-router';
import { DEFAULT_SSE_MAX_BUFFERED_BYTES } from './sse-stream';

// Real HTTP clients of GET /api/console/events: one never reads what it is
// sent, one reads everything. Events are published faster than the first
// takes them; the host must not buffer the stream for it without bound.
const EVENTS = 3000;
const BODY = 'x'.repeat(16 * 1024);

function rawGet(port: number): Socket {
  const socket = connect(port, '127.0.0.1');
  socket.write(`GET /api/console/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  return socket;
}

it('disconnects a client that does not read the live stream, keeps its buffer bounded, and serves readers in full', async () => {
  const events = new EventLog();
  const responses: Response[] = [];
  const app = express();
  app.use((_req, res, next) => {
    responses.push(res);
    next();
  });
  const dispatcher = {
    events,
    dispatch: () => Promise.reject(new Error('not used')),
    whenCompleted: () => Promise.resolve(undefined),
  } as unknown as Dispatcher;
  app.use('/api', createConsoleRouter({ dispatcher, provider: new ConsoleProvider(), heartbeatMilliseconds: 60_000 }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address() as AddressInfo;

  const slow = rawGet(port);
  slow.pause();
  const reader = rawGet(port);
  let seen = 0;
  let carry = '';
  reader.on('data', (c: Buffer) => {
    const text = carry + c.toString('latin1');
    seen += text.split('event: send').length - 1;
    carry = text.slice(-12);
  });
  try {
    while (responses.length < 2 || events['emitter'].listenerCount('update') < 2) await new Promise((r) => setTimeout(r, 5));
    const [slowRes] = responses;
    let slowClosed = false;
    slowRes!.on('close', () => (slowClosed = true));
    let most = 0;
    for (let i = 0; i < EVENTS; i++) {
      events.publish({
        type: 'send',
        outbound: {
          pluginId: 'p',
          kind: 'send',
          target: { type: 'group', id: 'g' } as never,
          body: { n: i, text: BODY },
          at: '',
          error: null,
        },
      });
      await new Promise((r) => setImmediate(r));
      most = Math.max(most, slowRes!.writableLength);
    }
    // The stream to the client that never reads was cut, its buffer never past the bound.
    expect(slowClosed).toBe(true);
    expect(most).toBeLessThanOrEqual(DEFAULT_SSE_MAX_BUFFERED_BYTES);
    // The reading client got everything.
    for (let i = 0; i < 400 && seen < EVENTS; i++) await new Promise((r) => setTimeout(r, 10));
    expect(seen).toBe(EVENTS);
  } finally {
    slow.destroy();
    reader.destroy();
    server.closeAllConnections();
    server.close();
  }
}, 60_000);
