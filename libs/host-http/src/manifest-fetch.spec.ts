import { HostError } from '@host/host-core';
import { HTTP_HEADERS, LIMITS } from '@host/protocol';
import { fetchHttpManifest, type FetchManifestOptions } from './manifest-fetch';
import type { Resolver } from './pinned-connector';
import { computeSignature } from './signing';
import { closedPort, manifest, sendJson, startServer, type TestServer } from './test-servers';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(...args: Parameters<typeof startServer>): Promise<TestServer> {
  const s = await startServer(...args);
  servers.push(s);
  return s;
}

async function failure(baseUrl: string, options: FetchManifestOptions = {}): Promise<HostError> {
  try {
    await fetchHttpManifest(baseUrl, options);
  } catch (e) {
    expect(e).toBeInstanceOf(HostError);
    return e as HostError;
  }
  throw new Error('fetchHttpManifest resolved, expected a HostError');
}

describe('fetchHttpManifest', () => {
  it('fetches and validates the manifest, signing the request when a secret is given', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, manifest({ description: 'echoes' })));
    const secret = 'test-secret';
    const m = await fetchHttpManifest(`${s.url}/`, { signingSecret: secret });
    expect(m).toMatchObject({
      pluginId: 'com.example.echo',
      capabilities: 9,
      permissions: ['messages.reply'],
      eventSubscriptions: [{ eventType: 'message.created' }],
    });
    const [req] = s.requests;
    expect(req).toMatchObject({ method: 'GET', path: '/host/plugin/manifest' });
    expect(req!.headers[HTTP_HEADERS.protocolVersion]).toBe('2');
    expect(req!.headers[HTTP_HEADERS.pluginId]).toBeUndefined();
    const ts = String(req!.headers[HTTP_HEADERS.timestamp]);
    const id = String(req!.headers[HTTP_HEADERS.deliveryId]);
    expect(req!.headers[HTTP_HEADERS.signature]).toBe(computeSignature(secret, ts, id, ''));
  });

  it('keeps a path prefix of the base URL', async () => {
    const s = await serve((req, res) =>
      req.path === '/plugins/echo/host/plugin/manifest' ? sendJson(res, 200, manifest()) : sendJson(res, 404, {}),
    );
    await expect(fetchHttpManifest(`${s.url}/plugins/echo/`)).resolves.toMatchObject({ pluginId: 'com.example.echo' });
  });

  it('accepts application/*+json with parameters', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, manifest(), 'application/vnd.host+json; charset=utf-8'));
    await expect(fetchHttpManifest(s.url)).resolves.toMatchObject({ version: '1.0.0' });
  });

  it.each([
    ['', /baseUrl is required/],
    ['not a url', /is not a URL/],
    ['ftp://example.com', /scheme "ftp" is not supported/],
    ['file:///etc/passwd', /scheme "file" is not supported/],
    ['http://example.com/?x=1', /query/],
    ['http://example.com/#top', /fragment/],
  ])('refuses the base URL %j with REGISTRATION_URL_INVALID', async (url, message) => {
    const e = await failure(url);
    expect(e.code).toBe('REGISTRATION_URL_INVALID');
    expect(e.status).toBe(400);
    expect(e.message).toMatch(message);
  });

  it('refuses credentials in the URL with REGISTRATION_URL_CREDENTIALS', async () => {
    for (const url of ['http://user:secret@127.0.0.1:8080', 'http://user@127.0.0.1:8080']) {
      expect((await failure(url)).code).toBe('REGISTRATION_URL_CREDENTIALS');
    }
  });

  it('reports a closed port as REGISTRATION_UNREACHABLE', async () => {
    const port = await closedPort();
    const e = await failure(`http://127.0.0.1:${port}`);
    expect(e.code).toBe('REGISTRATION_UNREACHABLE');
    expect(e.message).toMatch(/ECONNREFUSED|connect/i);
    expect(e.details).toMatchObject({ address: '127.0.0.1', cause: 'ECONNREFUSED' });
  });

  it('reports a host name that does not resolve as REGISTRATION_UNREACHABLE', async () => {
    const resolver: Resolver = async (host) => {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    };
    const e = await failure('http://plugin.invalid', { resolver });
    expect(e.code).toBe('REGISTRATION_UNREACHABLE');
    expect(e.message).toMatch(/plugin\.invalid does not resolve/);
  });

  it('reports a server that never answers as REGISTRATION_TIMEOUT', async () => {
    const s = await serve(() => undefined);
    const e = await failure(s.url, { timeoutMilliseconds: 300 });
    expect(e.code).toBe('REGISTRATION_TIMEOUT');
    expect(e.message).toMatch(/300 ms/);
  });

  it('reports a name that takes too long to resolve as REGISTRATION_TIMEOUT', async () => {
    const resolver: Resolver = () => new Promise(() => undefined);
    const e = await failure('http://slow-dns.test', { resolver, connectTimeoutMilliseconds: 100 });
    expect(e.code).toBe('REGISTRATION_TIMEOUT');
    expect(e.message).toMatch(/Resolving slow-dns\.test timed out/);
  });

  it('refuses a body that is not JSON with REGISTRATION_NOT_JSON', async () => {
    const html = await serve((_req, res) => sendJson(res, 200, '<html>hi</html>', 'text/html'));
    const e1 = await failure(html.url);
    expect(e1.code).toBe('REGISTRATION_NOT_JSON');
    expect(e1.message).toMatch(/text\/html/);
    const broken = await serve((_req, res) => sendJson(res, 200, '{"pluginId": ', 'application/json'));
    const e2 = await failure(broken.url);
    expect(e2.code).toBe('REGISTRATION_NOT_JSON');
    expect(e2.message).toMatch(/not valid JSON/);
  });

  it('refuses a manifest nested too deep or too wide with REGISTRATION_MANIFEST_TOO_COMPLEX, before parsing it', async () => {
    const deep = await serve((_req, res) =>
      sendJson(res, 200, JSON.stringify(manifest()).replace(/}$/, `,"x":${'['.repeat(6000)}${']'.repeat(6000)}}`)),
    );
    const e = await failure(deep.url);
    expect(e.code).toBe('REGISTRATION_MANIFEST_TOO_COMPLEX');
    expect(e.message).toMatch(/deeper than 64 levels/);
    const wide = await serve((_req, res) => sendJson(res, 200, { ...manifest(), x: Array.from({ length: 10_001 }, () => 0) }));
    expect((await failure(wide.url)).code).toBe('REGISTRATION_MANIFEST_TOO_COMPLEX');
  });

  it('refuses a manifest over the size cap with REGISTRATION_TOO_LARGE, declared or streamed', async () => {
    const big = JSON.stringify(manifest({ description: 'x'.repeat(LIMITS.maxHttpManifestBytes) }));
    const declared = await serve((_req, res) => sendJson(res, 200, big));
    expect((await failure(declared.url)).code).toBe('REGISTRATION_TOO_LARGE');
    // Chunked, no Content-Length: counted while reading.
    const streamed = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = 'x'.repeat(64 * 1024);
      for (let i = 0; i < 8; i++) res.write(chunk);
      res.end();
    });
    const e = await failure(streamed.url);
    expect(e.code).toBe('REGISTRATION_TOO_LARGE');
    expect(e.details).toMatchObject({ limitBytes: LIMITS.maxHttpManifestBytes });
  });

  it('does not follow redirects: REGISTRATION_REDIRECT', async () => {
    const target = await serve((_req, res) => sendJson(res, 200, manifest()));
    const s = await serve((_req, res) => {
      res.writeHead(302, { location: `${target.url}/host/plugin/manifest` });
      res.end();
    });
    const e = await failure(s.url);
    expect(e.code).toBe('REGISTRATION_REDIRECT');
    expect(e.details).toMatchObject({ status: 302, location: `${target.url}/host/plugin/manifest` });
    expect(target.requests).toHaveLength(0);
  });

  it('reports another status as REGISTRATION_HTTP_STATUS', async () => {
    const s = await serve((_req, res) => sendJson(res, 404, { error: 'no' }));
    const e = await failure(s.url);
    expect(e.code).toBe('REGISTRATION_HTTP_STATUS');
    expect(e.details).toMatchObject({ status: 404 });
  });

  it('reports missing capabilities as REGISTRATION_CAPABILITY_MISSING with the issues', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, manifest({ capabilities: 1 })));
    const e = await failure(s.url);
    expect(e.code).toBe('REGISTRATION_CAPABILITY_MISSING');
    expect(e.message).toMatch(/HttpTransport/);
    expect((e.details as { issues: unknown[] }).issues).toEqual([
      expect.objectContaining({ code: 'manifest.capabilities.missing', path: 'capabilities' }),
    ]);
  });

  it('reports another protocol version as REGISTRATION_PROTOCOL_UNSUPPORTED', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, manifest({ protocolVersion: 1 as never })));
    const e = await failure(s.url);
    expect(e.code).toBe('REGISTRATION_PROTOCOL_UNSUPPORTED');
    expect((e.details as { issues: unknown[] }).issues).toEqual(
      expect.arrayContaining([expect.objectContaining({ code: 'manifest.protocolVersion.unsupported' })]),
    );
  });

  it('reports other manifest problems as REGISTRATION_MANIFEST_INVALID, field by field', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, manifest({ name: undefined, pluginId: 'Not An Id' })));
    const e = await failure(s.url);
    expect(e.code).toBe('REGISTRATION_MANIFEST_INVALID');
    const paths = (e.details?.issues ?? []).map((i) => i.path).sort();
    expect(paths).toEqual(['name', 'pluginId']);
  });
});

describe('fetchHttpManifest address policy', () => {
  it.each([
    'http://169.254.169.254/',
    'http://[::ffff:169.254.169.254]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://0.0.0.0:9/',
    'http://[fe80::1]/',
    'http://224.0.0.1/',
    'http://100.100.100.200/',
    'http://[fd00:ec2::254]/',
  ])('refuses %s with REGISTRATION_ADDRESS_REFUSED', async (url) => {
    const e = await failure(url);
    expect(e.code).toBe('REGISTRATION_ADDRESS_REFUSED');
    expect(e.message).toMatch(/never calls/);
  });

  it('refuses loopback when allowLoopback is off, without connecting', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, manifest()));
    const e = await failure(s.url, { policy: { allowLoopback: false, allowPrivate: true } });
    expect(e.code).toBe('REGISTRATION_ADDRESS_REFUSED');
    expect(e.message).toMatch(/HOST_HTTP_ALLOW_LOOPBACK=true/);
    expect(s.requests).toHaveLength(0);
  });

  it('refuses a name when any of its addresses is refused', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, manifest()));
    const resolver: Resolver = async () => [
      { address: '127.0.0.1', family: 4 },
      { address: '169.254.169.254', family: 4 },
    ];
    const e = await failure(`http://plugin.test:${s.port}`, { resolver });
    expect(e.code).toBe('REGISTRATION_ADDRESS_REFUSED');
    expect(e.details).toMatchObject({
      hostname: 'plugin.test',
      refused: [expect.objectContaining({ address: '169.254.169.254', category: 'link-local' })],
    });
    expect(s.requests).toHaveLength(0);
  });

  it('connects to the checked address while sending the original Host header', async () => {
    const s = await serve((_req, res) => sendJson(res, 200, manifest()));
    const resolver: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    await fetchHttpManifest(`http://plugin.test:${s.port}`, { resolver });
    expect(s.requests[0]!.headers.host).toBe(`plugin.test:${s.port}`);
    expect(s.requests[0]!.localAddress).toBe('127.0.0.1');
  });
});
