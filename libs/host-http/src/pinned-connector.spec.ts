import { execFileSync } from 'node:child_process';
import diagnostics from 'node:diagnostics_channel';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostError } from '@host/host-core';
import { fetchHttpManifest } from './manifest-fetch';
import type { Resolver } from './pinned-connector';
import { manifest, sendJson, startServer, type TestServer } from './test-servers';

/** A resolver that answers from a script, one answer per lookup, and counts lookups. */
function scriptedResolver(...answers: string[][]): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver = (async (hostname: string) => {
    calls.push(hostname);
    const answer = answers[Math.min(calls.length - 1, answers.length - 1)]!;
    return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  }) as Resolver & { calls: string[] };
  resolver.calls = calls;
  return resolver;
}

async function codeOf(p: Promise<unknown>): Promise<HostError> {
  try {
    await p;
  } catch (e) {
    return e as HostError;
  }
  throw new Error('expected a rejection');
}

describe('DNS rebinding', () => {
  let server: TestServer;
  beforeEach(async () => {
    server = await startServer((_req, res) => sendJson(res, 200, manifest()));
  });
  afterEach(() => server.close());

  it('checks every lookup and connects only to the checked address', async () => {
    const resolver = scriptedResolver(['127.0.0.1'], ['169.254.169.254']);
    await expect(fetchHttpManifest(`http://rebind.test:${server.port}`, { resolver })).resolves.toMatchObject({
      pluginId: 'com.example.echo',
    });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.localAddress).toBe('127.0.0.1');
    // The name now points at the metadata service: refused, never connected.
    const e = await codeOf(fetchHttpManifest(`http://rebind.test:${server.port}`, { resolver }));
    expect(e.code).toBe('REGISTRATION_ADDRESS_REFUSED');
    expect(e.details).toMatchObject({ hostname: 'rebind.test', addresses: ['169.254.169.254'] });
    expect(resolver.calls).toEqual(['rebind.test', 'rebind.test']);
    expect(server.requests).toHaveLength(1);
  });

  it('with a public first answer, the socket goes to that address and no second lookup is made', async () => {
    // 203.0.113.10 (TEST-NET-3) is public. Whatever answers there (nothing,
    // or a proxy of the test machine), the socket's destination is observed
    // through undici's diagnostics channels.
    const resolver = scriptedResolver(['203.0.113.10'], ['169.254.169.254']);
    const options = {
      resolver,
      policy: { allowLoopback: false, allowPrivate: false },
      connectTimeoutMilliseconds: 300,
      timeoutMilliseconds: 2000,
    };
    const destinations = observeDestinations();
    try {
      await fetchHttpManifest('http://rebind.test', options).catch(() => undefined);
      expect(destinations.list).toEqual(['203.0.113.10']);
      expect(resolver.calls).toEqual(['rebind.test']);
      const e = await codeOf(fetchHttpManifest('http://rebind.test', options));
      expect(e.code).toBe('REGISTRATION_ADDRESS_REFUSED');
      expect(destinations.list).toEqual(['203.0.113.10']);
    } finally {
      destinations.stop();
    }
  });
});

/** Records where undici's sockets went: the peer of each connected socket, or the address a failed connect tried. */
function observeDestinations(): { list: string[]; stop(): void } {
  const list: string[] = [];
  const connected = (message: unknown) => {
    const socket = (message as { socket: { remoteAddress?: string } }).socket;
    list.push(socket.remoteAddress ?? '?');
  };
  const failed = (message: unknown) => {
    const address = (message as { error: { details?: { address?: string } } }).error.details?.address;
    if (address) list.push(address);
  };
  diagnostics.subscribe('undici:client:connected', connected);
  diagnostics.subscribe('undici:client:connectError', failed);
  return {
    list,
    stop() {
      diagnostics.unsubscribe('undici:client:connected', connected);
      diagnostics.unsubscribe('undici:client:connectError', failed);
    },
  };
}

describe('https with a pinned address', () => {
  let dir: string;
  let cert: Buffer;
  let key: Buffer;
  let server: Server;
  let port: number;
  const servernames: (string | false | null)[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'host-http-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=plugin.test',
        '-addext',
        'subjectAltName=DNS:plugin.test',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    cert = readFileSync(join(dir, 'cert.pem'));
    key = readFileSync(join(dir, 'key.pem'));
    server = createServer({ cert, key }, (req, res) => {
      servernames.push((req.socket as TLSSocket).servername);
      sendJson(res, 200, manifest());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends the host name as SNI and checks the certificate against it, not against the address', async () => {
    const resolver = scriptedResolver(['127.0.0.1']);
    await expect(fetchHttpManifest(`https://plugin.test:${port}`, { resolver, tls: { ca: cert } })).resolves.toMatchObject({
      pluginId: 'com.example.echo',
    });
    expect(servernames.at(-1)).toBe('plugin.test');
  });

  it('refuses a certificate for another name with REGISTRATION_TLS_FAILED', async () => {
    const resolver = scriptedResolver(['127.0.0.1']);
    const e = await codeOf(fetchHttpManifest(`https://other.test:${port}`, { resolver, tls: { ca: cert } }));
    expect(e.code).toBe('REGISTRATION_TLS_FAILED');
    expect(e.details).toMatchObject({ cause: 'ERR_TLS_CERT_ALTNAME_INVALID' });
  });

  it('refuses an untrusted certificate with REGISTRATION_TLS_FAILED', async () => {
    const resolver = scriptedResolver(['127.0.0.1']);
    const e = await codeOf(fetchHttpManifest(`https://plugin.test:${port}`, { resolver }));
    expect(e.code).toBe('REGISTRATION_TLS_FAILED');
    expect(e.message).toMatch(/self[- ]signed/i);
  });
});
