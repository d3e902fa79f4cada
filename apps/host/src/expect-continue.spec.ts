import { hostPaths } from '@host/host-core';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeHost, type Host } from './compose';
import { stdioFixturePackage } from './fixture-plugins.spec-helper';
import { createHostServer } from './http-server';

// Package uploads with `Expect: 100-continue` over real sockets to the composed
// host: a request the host will refuse anyway gets its final status as the
// first line it reads, never `100 Continue`, and the connection closes after it;
// a good one gets `100 Continue`, sends its body and is installed.
const TOKEN = 'continue-test-token-0123456789abcdef0123';
const MAX_UPLOAD = 256 * 1024;
const BOUNDARY = 'continue-test-boundary';

let dataDir: string;
let host: Host;
let server: Server;
let port: number;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'continue-'));
  host = await composeHost({
    paths: hostPaths(dataDir),
    store: 'file',
    adminToken: TOKEN,
    version: '0.0.0-test',
    log: () => undefined,
    maxUploadBytes: MAX_UPLOAD,
    httpHealthCheckMilliseconds: 0,
    runtimeTimings: { pingIntervalMilliseconds: 0 },
  });
  server = createHostServer(host.app);
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  port = (server.address() as AddressInfo).port;
}, 60_000);

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await host?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A multipart body holding `zip` as the `package` field. */
function multipart(zip: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="package"; filename="p.zip"\r\nContent-Type: application/zip\r\n\r\n`,
    ),
    zip,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

interface Exchange {
  socket: Socket;
  /** Everything read so far. */
  text: () => string;
  /** Resolves once what was read contains `pattern`. */
  until: (pattern: RegExp) => Promise<string>;
  closed: Promise<void>;
}

/** Opens a connection and sends the headers of an upload of `length` bytes that expects 100-continue, and no body. */
function startUpload(length: number, authorization: string | null = `Bearer ${TOKEN}`): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' }, () => {
      socket.write(
        [
          'POST /api/plugins/packages HTTP/1.1',
          'Host: 127.0.0.1',
          ...(authorization ? [`Authorization: ${authorization}`] : []),
          `Content-Type: multipart/form-data; boundary=${BOUNDARY}`,
          `Content-Length: ${length}`,
          'Expect: 100-continue',
          '',
          '',
        ].join('\r\n'),
      );
      resolve(exchange);
    });
    let read = '';
    const waiting: { pattern: RegExp; done: (t: string) => void }[] = [];
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.on('data', (c: Buffer) => {
      read += c.toString('latin1');
      for (const w of waiting.splice(0))
        if (w.pattern.test(read)) w.done(read);
        else waiting.push(w);
    });
    socket.once('error', reject);
    const exchange: Exchange = {
      socket,
      text: () => read,
      until: (pattern) => (pattern.test(read) ? Promise.resolve(read) : new Promise((done) => waiting.push({ pattern, done }))),
      closed,
    };
  });
}

const firstLine = (text: string) => text.split('\r\n')[0];

it('answers an upload without the admin token, or with a wrong one, with 401 and no 100 Continue', async () => {
  for (const authorization of [null, 'Bearer not-the-token']) {
    const x = await startUpload(1000, authorization);
    await x.closed;
    expect(firstLine(x.text())).toBe('HTTP/1.1 401 Unauthorized');
    expect(x.text()).not.toContain('100 Continue');
    expect(x.text()).toMatch(/\r\nConnection: close\r\n/i);
  }
});

it('answers an upload whose Content-Length is above the limit with 413 and no 100 Continue', async () => {
  const x = await startUpload(MAX_UPLOAD + 1024 * 1024);
  await x.closed;
  expect(firstLine(x.text())).toBe('HTTP/1.1 413 Payload Too Large');
  expect(x.text()).toContain('"code":"INSTALL_UPLOAD_TOO_LARGE"');
});

it('answers an upload while every upload slot is taken with 503 and no 100 Continue, and takes uploads again after', async () => {
  const body = multipart(stdioFixturePackage('com.example.continue-busy'));
  // Two uploads in progress: each got 100 Continue and sent half of its body.
  const busy = await Promise.all([startUpload(body.length), startUpload(body.length)]);
  for (const b of busy) {
    await b.until(/^HTTP\/1\.1 100 Continue\r\n\r\n/);
    b.socket.write(body.subarray(0, body.length >> 1));
  }
  await new Promise((r) => setTimeout(r, 100));
  const refused = await startUpload(body.length);
  await refused.closed;
  expect(firstLine(refused.text())).toBe('HTTP/1.1 503 Service Unavailable');
  expect(refused.text()).toContain('"code":"INSTALL_UPLOADS_BUSY"');
  for (const b of busy) b.socket.destroy();
  await Promise.all(busy.map((b) => b.closed));
  await new Promise((r) => setTimeout(r, 100));
  const again = await startUpload(body.length);
  expect(firstLine(await again.until(/\r\n/))).toBe('HTTP/1.1 100 Continue');
  again.socket.destroy();
});

it('answers a good upload with 100 Continue first, then installs what it sends', async () => {
  const body = multipart(stdioFixturePackage('com.example.continue'));
  const x = await startUpload(body.length);
  expect(firstLine(await x.until(/\r\n/))).toBe('HTTP/1.1 100 Continue');
  x.socket.write(body);
  const answer = await x.until(/\r\n\r\n[\s\S]*"pluginId":"com\.example\.continue"/);
  expect(answer.split('\r\n\r\n')[1]!.split('\r\n')[0]).toBe('HTTP/1.1 201 Created');
  x.socket.destroy();
});
