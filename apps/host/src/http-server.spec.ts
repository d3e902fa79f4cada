import express from 'express';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Server } from 'node:http';
import { createHostServer } from './http-server';

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
  // Past the header timeout every silent connection is gone.
  await Promise.all(silent.map((s) => s.gone));
  expect(await openCount()).toBe(0);
  expect(await health('127.0.0.1')).toBe('HTTP/1.1 200 OK');
}, 30_000);
