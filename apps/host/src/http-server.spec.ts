import express from 'express';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHostServer, DEFAULT_SERVER_LIMITS } from './http-server';

// Real connections to the host's HTTP server: one address opens many
// connections and sends nothing; health checks from another address still
// get answers, and the silent connections are closed.
let server: Server;
let port: number;

beforeEach(async () => {
  const app = express();
  app.get('/api/health', (_req, res) => void res.json({ status: 'ok' }));
  server = createHostServer(app, {
    headersTimeoutMilliseconds: 500,
    requestTimeoutMilliseconds: 1_000,
    checkIntervalMilliseconds: 100,
    maxConnectionsPerAddress: 50,
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  port = (server.address() as AddressInfo).port;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function openSilent(localAddress: string): Promise<Socket & { gone: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1', localAddress }) as Socket & { gone: Promise<void> };
    s.gone = new Promise<void>((r) => s.once('close', () => r()));
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

async function health(localAddress: string): Promise<string> {
  const s = await openSilent(localAddress);
  return new Promise((resolve) => {
    let text = '';
    s.on('data', (c: Buffer) => (text += c.toString()));
    s.on('close', () => resolve(text.split('\r\n')[0] ?? ''));
    s.on('error', () => resolve(text.split('\r\n')[0] ?? ''));
    s.write('GET /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  });
}

const openCount = () => new Promise<number>((r) => server.getConnections((_e, n) => r(n)));

it('caps the connections of one address, answers health checks from another, and closes silent connections', async () => {
  const silent = await Promise.all(Array.from({ length: 200 }, () => openSilent('127.0.0.1')));
  silent.forEach((s) => s.on('error', () => undefined));
  await new Promise((r) => setTimeout(r, 50));
  expect(await openCount()).toBeLessThanOrEqual(50);
  expect(await health('127.0.0.2')).toBe('HTTP/1.1 200 OK');
  // Past the header timeout the host has closed every silent connection. (A client may see the host's 408 some
  // time before the end of its connection, so the host's own count is what is waited for.)
  while ((await openCount()) > 0) await new Promise((r) => setTimeout(r, 50));
  silent.forEach((s) => s.destroy());
  expect(await health('127.0.0.1')).toBe('HTTP/1.1 200 OK');
}, 30_000);

/** A keep-alive connection that has had one answer and now waits idle; answers the socket and the answer's head. */
async function servedOnce(localAddress: string, path = '/api/health'): Promise<{ socket: Socket & { gone: Promise<void> }; head: string }> {
  const s = await openSilent(localAddress);
  s.on('error', () => undefined);
  const head = await new Promise<string>((resolve) => {
    let text = '';
    const onData = (c: Buffer) => {
      text += c.toString();
      if (text.includes('\r\n\r\n') && text.endsWith('}')) {
        s.off('data', onData);
        resolve(text.split('\r\n\r\n')[0]!);
      }
    };
    s.on('data', onData);
    s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
  return { socket: s, head };
}

it("at the per-address cap, closes that address's longest idle keep-alive connection for a new one", async () => {
  const idle = [];
  for (let i = 0; i < 50; i++) idle.push(await servedOnce('127.0.0.1'));
  expect(await openCount()).toBe(50);
  // Before, the 51st connection was closed at once and the address could not send anything until one timed out.
  expect(await health('127.0.0.1')).toBe('HTTP/1.1 200 OK');
  await idle[0]!.socket.gone;
  // That connection has ended, so the first new one fits; each further one takes the place of the one idle longest.
  const more = [];
  for (let i = 0; i < 5; i++) more.push(await servedOnce('127.0.0.1'));
  expect(more.map((c) => c.head.split('\r\n')[0])).toEqual(Array(5).fill('HTTP/1.1 200 OK'));
  await Promise.all(idle.slice(1, 5).map((c) => c.socket.gone));
  expect(idle.slice(5).every((c) => !c.socket.destroyed)).toBe(true);
  expect(await openCount()).toBe(50);
}, 30_000);

it('never closes a connection with a request in progress: with every one busy, a new connection is refused', async () => {
  const release: (() => void)[] = [];
  const slowServer = createHostServer(
    (req, res) => {
      if (req.url === '/slow') release.push(() => res.end('{}'));
      else res.end('{}');
    },
    { maxConnectionsPerAddress: 10 },
  );
  slowServer.listen(0, '127.0.0.1');
  await new Promise((r) => slowServer.once('listening', r));
  const slowPort = (slowServer.address() as AddressInfo).port;
  try {
    const busy = await Promise.all(
      Array.from(
        { length: 10 },
        () =>
          new Promise<Socket>((resolve) => {
            const s = connect({ port: slowPort, host: '127.0.0.1', localAddress: '127.0.0.1' }, () => {
              s.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
              resolve(s);
            });
          }),
      ),
    );
    while (release.length < 10) await new Promise((r) => setTimeout(r, 10));
    const refused = connect({ port: slowPort, host: '127.0.0.1', localAddress: '127.0.0.1' });
    refused.on('error', () => undefined);
    refused.write('GET /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    let answer = '';
    refused.on('data', (c: Buffer) => (answer += c.toString()));
    await new Promise((r) => refused.once('close', r));
    expect(answer).toBe('');
    const answers = busy.map(
      (s) => new Promise<string>((resolve) => s.once('data', (c: Buffer) => resolve(c.toString().split('\r\n')[0]!))),
    );
    release.forEach((r) => r());
    expect(await Promise.all(answers)).toEqual(Array(10).fill('HTTP/1.1 200 OK'));
    busy.forEach((s) => s.destroy());
  } finally {
    slowServer.closeAllConnections();
    await new Promise((r) => slowServer.close(r));
  }
}, 30_000);

it('keeps idle connections as long as the operator guide says, and says so in Keep-Alive', async () => {
  const guide = readFileSync(join(__dirname, '../../../docs/operator/configuration.md'), 'utf8');
  const row = /^\| idle keep-alive connection \| closed after (\d+) s /m.exec(guide);
  expect(row && Number(row[1]) * 1000).toBe(DEFAULT_SERVER_LIMITS.keepAliveTimeoutMilliseconds);
  const defaults = createHostServer((_req, res) => res.end('{}'));
  defaults.listen(0, '127.0.0.1');
  await new Promise((r) => defaults.once('listening', r));
  try {
    const s = connect({ port: (defaults.address() as AddressInfo).port, host: '127.0.0.1' });
    const head = await new Promise<string>((resolve) => {
      s.once('data', (c: Buffer) => resolve(c.toString()));
      s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    expect(head).toContain(`Keep-Alive: timeout=${DEFAULT_SERVER_LIMITS.keepAliveTimeoutMilliseconds / 1000}\r\n`);
    s.destroy();
  } finally {
    defaults.closeAllConnections();
    await new Promise((r) => defaults.close(r));
  }
});
