import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HTTP_HEADERS } from '@host/protocol';
import { computeSignature, generateSigningSecret, ReplayGuard, signRequest, verifySignature } from './signing';

const doc = readFileSync(join(__dirname, '../../../docs/protocol/http-signing.md'), 'utf8');

/** The value in the worked example's table row whose first cell is `label`. */
function row(label: string): string {
  const example = doc.slice(doc.indexOf('## Worked example'));
  for (const line of example.split('\n')) {
    if (!line.startsWith(`| ${label} |`)) continue;
    const value = /^ \| `([^`]*)`/.exec(line.slice(label.length + 2));
    if (value) return value[1]!;
  }
  throw new Error(`row ${label} not found in the worked example of http-signing.md`);
}

describe('worked example of docs/protocol/http-signing.md', () => {
  const secret = /Secret \(as shown at registration\): `([^`]+)`/.exec(doc)![1]!;
  const timestamp = row('`x-host-timestamp`');
  const deliveryId = row('`x-host-delivery-id`');
  const body = row('raw body');
  const signature = row('`x-host-signature`');

  it('reads the example from the page', () => {
    expect(secret).toBe('kR3d9Zq0bV7xN2mW5tY8uA1sD4fG6hJ9kL0pO3iU7yE');
    expect(timestamp).toBe('1767225600');
    expect(body.startsWith('{"eventId":"evt-1"')).toBe(true);
  });

  it('gives the documented signature over the body', () => {
    expect(computeSignature(secret, timestamp, deliveryId, body)).toBe(signature);
    expect(computeSignature(secret, timestamp, deliveryId, Buffer.from(body, 'utf8'))).toBe(signature);
    expect(signRequest(secret, body, { timestamp: Number(timestamp), deliveryId })).toEqual({
      [HTTP_HEADERS.timestamp]: timestamp,
      [HTTP_HEADERS.deliveryId]: deliveryId,
      [HTTP_HEADERS.signature]: signature,
    });
  });

  it('gives the documented signature over an empty body (manifest GET)', () => {
    const empty = /over an empty body \(a manifest GET\) give\s+`(v1=[0-9a-f]{64})`/.exec(doc)![1];
    expect(computeSignature(secret, timestamp, deliveryId, '')).toBe(empty);
  });
});

describe('generateSigningSecret', () => {
  it('makes 32 random bytes in base64url without padding', () => {
    const a = generateSigningSecret();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a, 'base64url')).toHaveLength(32);
    expect(generateSigningSecret()).not.toBe(a);
  });
});

describe('verifySignature', () => {
  const secret = generateSigningSecret();
  const body = '{"eventId":"e1"}';
  const now = 1_800_000_000;

  it('accepts a request signed with the secret', () => {
    const headers = signRequest(secret, body, { timestamp: now });
    expect(verifySignature({ secret, rawBody: body, headers, nowSeconds: now + 10 })).toMatchObject({ ok: true, timestamp: now });
  });

  it('refuses a wrong secret, a changed body and missing headers', () => {
    const headers = signRequest(secret, body, { timestamp: now });
    expect(verifySignature({ secret: generateSigningSecret(), rawBody: body, headers, nowSeconds: now })).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(verifySignature({ secret, rawBody: `${body} `, headers, nowSeconds: now })).toMatchObject({ ok: false, reason: 'bad_signature' });
    const { [HTTP_HEADERS.signature]: _dropped, ...rest } = headers;
    expect(verifySignature({ secret, rawBody: body, headers: rest, nowSeconds: now })).toMatchObject({ ok: false, reason: 'missing_header' });
  });

  it('refuses timestamps more than 300 s away in either direction', () => {
    const old = signRequest(secret, body, { timestamp: now - 301 });
    const future = signRequest(secret, body, { timestamp: now + 301 });
    const edge = signRequest(secret, body, { timestamp: now - 300 });
    expect(verifySignature({ secret, rawBody: body, headers: old, nowSeconds: now })).toMatchObject({ ok: false, reason: 'stale_timestamp' });
    expect(verifySignature({ secret, rawBody: body, headers: future, nowSeconds: now })).toMatchObject({ ok: false, reason: 'stale_timestamp' });
    expect(verifySignature({ secret, rawBody: body, headers: edge, nowSeconds: now })).toMatchObject({ ok: true });
    expect(verifySignature({ secret, rawBody: body, headers: { ...edge, [HTTP_HEADERS.timestamp]: '1.5e9' }, nowSeconds: now })).toMatchObject({
      ok: false,
      reason: 'bad_timestamp',
    });
  });

  it('refuses a replayed delivery id, but only after the signature checks out', () => {
    const guard = new ReplayGuard(300);
    const headers = signRequest(secret, body, { timestamp: now });
    const forged = { ...headers, [HTTP_HEADERS.signature]: `v1=${'0'.repeat(64)}` };
    expect(verifySignature({ secret, rawBody: body, headers: forged, nowSeconds: now, replayGuard: guard })).toMatchObject({ reason: 'bad_signature' });
    expect(guard.size).toBe(0);
    expect(verifySignature({ secret, rawBody: body, headers, nowSeconds: now, replayGuard: guard })).toMatchObject({ ok: true });
    expect(verifySignature({ secret, rawBody: body, headers, nowSeconds: now + 1, replayGuard: guard })).toMatchObject({ ok: false, reason: 'replayed' });
  });

  it('accepts any one of several comma-separated signatures (secret rotation)', () => {
    const headers = signRequest(secret, body, { timestamp: now });
    const other = computeSignature(generateSigningSecret(), String(now), headers[HTTP_HEADERS.deliveryId]!, body);
    const both = { ...headers, [HTTP_HEADERS.signature]: `${other}, ${headers[HTTP_HEADERS.signature]}` };
    expect(verifySignature({ secret, rawBody: body, headers: both, nowSeconds: now })).toMatchObject({ ok: true });
  });
});

describe('ReplayGuard', () => {
  it('forgets ids once they leave the window', () => {
    const guard = new ReplayGuard(300);
    expect(guard.remember('a', 1000, 1000)).toBe(true);
    expect(guard.remember('a', 1000, 1200)).toBe(false);
    expect(guard.remember('b', 1301, 1301)).toBe(true);
    expect(guard.size).toBe(1);
    expect(guard.remember('a', 1302, 1302)).toBe(true);
  });
});
