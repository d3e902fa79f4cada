import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HTTP_HEADERS } from '../src/http';
import { computeSignature, signatureHeaders, verifySignature, type SignatureCheck } from './signing';

// The worked example of docs/protocol/http-signing.md, read from the page so the two cannot drift.
const doc = readFileSync(join(__dirname, '../../../docs/protocol/http-signing.md'), 'utf8');
const row = (name: string) => (new RegExp(`\\| \`${name}\` \\| \`([^\`]+)\``).exec(doc) as RegExpExecArray)[1] as string;
const secret = (/Secret \(as shown at registration\): `([^`]+)`/.exec(doc) as RegExpExecArray)[1] as string;
const timestamp = row('x-host-timestamp').split(' ')[0] as string;
const deliveryId = row('x-host-delivery-id');
const body = (/\| raw body \| `([^`]+)`/.exec(doc) as RegExpExecArray)[1] as string;
const signature = (/\| `x-host-signature` \| `(v1=[0-9a-f]{64})`/.exec(doc) as RegExpExecArray)[1] as string;
const emptyBodySignature = (/over an empty body \(a manifest GET\) give\s+`(v1=[0-9a-f]{64})`/.exec(doc) as RegExpExecArray)[1];

describe('computeSignature and signatureHeaders (worked example)', () => {
  it('reads the example from the page', () => {
    expect([secret, timestamp, body.startsWith('{"eventId":"evt-1"')]).toEqual([
      'kR3d9Zq0bV7xN2mW5tY8uA1sD4fG6hJ9kL0pO3iU7yE',
      '1767225600',
      true,
    ]);
  });

  it('gives the documented signature over the body, as text or bytes, and over an empty body', () => {
    expect(computeSignature(secret, timestamp, deliveryId, body)).toBe(signature);
    expect(computeSignature(secret, timestamp, deliveryId, Buffer.from(body, 'utf8'))).toBe(signature);
    expect(computeSignature(secret, timestamp, deliveryId, '')).toBe(emptyBodySignature);
    expect(signatureHeaders(secret, body, { timestamp: Number(timestamp), deliveryId })).toEqual({
      [HTTP_HEADERS.timestamp]: timestamp,
      [HTTP_HEADERS.deliveryId]: deliveryId,
      [HTTP_HEADERS.signature]: signature,
    });
  });

  it('defaults to now and a new delivery id', () => {
    const a = signatureHeaders(secret, body);
    expect(Math.abs(Number(a[HTTP_HEADERS.timestamp]) - Date.now() / 1000)).toBeLessThan(5);
    expect(a[HTTP_HEADERS.deliveryId]).not.toBe(signatureHeaders(secret, body)[HTTP_HEADERS.deliveryId]);
  });
});

describe('verifySignature', () => {
  const now = Number(timestamp);
  const signed = signatureHeaders(secret, body, { timestamp: now, deliveryId });
  const other = computeSignature('another-secret', timestamp, deliveryId, body);
  type Headers = Record<string, string | string[] | undefined>;
  const { [HTTP_HEADERS.signature]: _s, ...withoutSignature } = signed;
  const { [HTTP_HEADERS.timestamp]: _t, ...withoutTimestamp } = signed;
  const at = (seconds: number) => signatureHeaders(secret, body, { timestamp: seconds, deliveryId });

  it.each<
    [string, { headers: Headers; rawBody?: string | Uint8Array; secrets?: string[]; nowSeconds?: number }, SignatureCheck['ok'] | string]
  >([
    ['the worked example', { headers: signed }, true],
    ['the body as bytes', { headers: signed, rawBody: Buffer.from(body) }, true],
    ['300 s old (the edge of the window)', { headers: at(now - 300) }, true],
    ['300 s ahead', { headers: at(now + 300) }, true],
    ['301 s old', { headers: at(now - 301) }, 'signature.expired'],
    ['301 s ahead', { headers: at(now + 301) }, 'signature.expired'],
    ['a wrong secret', { headers: signed, secrets: ['another-secret'] }, 'signature.invalid'],
    ['any of several secrets (rotation)', { headers: signed, secrets: ['another-secret', secret] }, true],
    ['no secret at all', { headers: signed, secrets: [] }, 'signature.invalid'],
    ['a changed body', { headers: signed, rawBody: `${body} ` }, 'signature.invalid'],
    ['any of several comma-separated signatures', { headers: { ...signed, [HTTP_HEADERS.signature]: `${other}, ${signature}` } }, true],
    ['only signatures of another secret', { headers: { ...signed, [HTTP_HEADERS.signature]: `${other},${other}` } }, 'signature.invalid'],
    ['a missing signature', { headers: withoutSignature }, 'signature.missing'],
    ['a missing timestamp', { headers: withoutTimestamp }, 'signature.missing'],
    ['a timestamp that is not decimal unix seconds', { headers: { ...signed, [HTTP_HEADERS.timestamp]: '1.5e9' } }, 'signature.malformed'],
    ['another signature scheme', { headers: { ...signed, [HTTP_HEADERS.signature]: 'sha256=abc' } }, 'signature.malformed'],
    ['upper-case hex', { headers: { ...signed, [HTTP_HEADERS.signature]: signature.toUpperCase() } }, 'signature.malformed'],
    ['a delivery id with a dot', { headers: { ...signed, [HTTP_HEADERS.deliveryId]: 'a.b' } }, 'signature.malformed'],
    ['a header given twice', { headers: { ...signed, [HTTP_HEADERS.signature]: [signature, signature] } }, 'signature.missing'],
    ['a header given once, as a list', { headers: { ...signed, [HTTP_HEADERS.signature]: [signature] } }, true],
  ])('%s', (_name, c, expected) => {
    const check = verifySignature({
      headers: c.headers,
      rawBody: c.rawBody ?? body,
      secrets: c.secrets ?? [secret],
      nowMs: (c.nowSeconds ?? now) * 1000,
    });
    expect(check.ok ? true : check.code).toBe(expected);
  });

  it('says which way the clock is off', () => {
    const check = (seconds: number) => verifySignature({ headers: at(seconds), rawBody: body, secrets: [secret], nowMs: now * 1000 });
    expect(check(now - 301)).toMatchObject({ message: expect.stringMatching(/301 s ago/) });
    expect(check(now + 301)).toMatchObject({ message: expect.stringMatching(/301 s in the future/) });
    expect(
      verifySignature({ headers: at(now), rawBody: body, secrets: [secret], nowMs: (now + 31) * 1000, toleranceSeconds: 30 }),
    ).toMatchObject({ code: 'signature.expired' });
  });
});
