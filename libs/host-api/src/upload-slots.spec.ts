import { hostPaths } from '@host/host-core';
import { PluginInstaller } from '@host/host-installer';
import { createUnavailableRuntime, testManifest, testPackage } from '@host/host-installer/testing';
import { FilePendingUpdateStore, FileSettingsStore, JsonRegistryStore } from '@host/host-store';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:http';
import { createApp } from './app';
import { ensureAdminToken } from './auth';

// Real HTTP uploads to a listening admin API: uploads that are still being
// sent hold their slot; one more is refused at once instead of being read.
let dataDir: string;
let server: Server;
let port: number;
let token: string;
let store: JsonRegistryStore;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'uploads-'));
  const paths = hostPaths(dataDir);
  store = await JsonRegistryStore.open(paths.stateDir);
  const installer = new PluginInstaller({
    paths,
    store,
    pendingUpdates: new FilePendingUpdateStore(join(paths.stateDir, 'pending')),
    runtime: createUnavailableRuntime(),
  });
  await installer.init();
  const { hash, generated } = await ensureAdminToken(store);
  token = generated!;
  const app = createApp({
    paths,
    store,
    settings: new FileSettingsStore(paths),
    installer,
    runtime: createUnavailableRuntime(),
    adminTokenHash: hash,
    maxConcurrentUploads: 2,
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  port = (server.address() as AddressInfo).port;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const BOUNDARY = 'x-boundary-x';
function multipart(zip: Buffer): { head: Buffer; tail: Buffer } {
  return {
    head: Buffer.from(
      `--${BOUNDARY}\r\ncontent-disposition: form-data; name="package"; filename="p.zip"\r\ncontent-type: application/zip\r\n\r\n`,
    ),
    tail: Buffer.concat([zip, Buffer.from(`\r\n--${BOUNDARY}--\r\n`)]),
  };
}

/** Starts an upload and sends only the start of its body; `finish` sends the rest. */
function startUpload(zip: Buffer): {
  req: ClientRequest;
  response: Promise<{ status: number; body: { error?: { code: string } }; retryAfter?: string }>;
  finish(): void;
} {
  const { head, tail } = multipart(zip);
  const req = httpRequest({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/api/plugins/packages',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
      'content-length': head.length + tail.length,
    },
  });
  const response = new Promise<{ status: number; body: { error?: { code: string } }; retryAfter?: string }>((resolve, reject) => {
    req.on('response', (res: IncomingMessage) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () =>
        resolve({ status: res.statusCode!, body: JSON.parse(text || '{}'), retryAfter: res.headers['retry-after'] as string | undefined }),
      );
    });
    req.on('error', reject);
  });
  response.catch(() => undefined);
  req.write(head);
  return { req, response, finish: () => req.end(tail) };
}

it('refuses an upload beyond the concurrency cap with 503 INSTALL_UPLOADS_BUSY, and frees the slot when an upload ends', async () => {
  const zip = testPackage();
  const a = startUpload(zip);
  const b = startUpload(zip);
  // Both are being received: give the server time to take them.
  await new Promise((r) => setTimeout(r, 100));
  const c = startUpload(zip);
  c.finish();
  const refused = await c.response;
  expect({ status: refused.status, code: refused.body.error?.code, retryAfter: refused.retryAfter }).toEqual({
    status: 503,
    code: 'INSTALL_UPLOADS_BUSY',
    retryAfter: '5',
  });
  // One held upload is abandoned, the other completes: both slots come back.
  a.req.destroy();
  b.finish();
  expect((await b.response).status).toBe(201);
  await new Promise((r) => setTimeout(r, 50));
  const d = startUpload(testPackage({ manifest: testManifest({ pluginId: 'com.example.other' }) }));
  d.finish();
  expect((await d.response).status).toBe(201);
});
