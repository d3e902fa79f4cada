import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ReplayGuard, signRequest, verifySignature } from './signature';

// The worked example of docs/protocol/http-signing.md, read from the page so they cannot drift.
const doc = readFileSync(join(__dirname, '../../../../docs/protocol/http-signing.md'), 'utf8');
const row = (name: string) => (new RegExp(`\\| \`${name}\` \\| \`([^\`]+)\``).exec(doc) as RegExpExecArray)[1] as string;
const secret = (/Secret \(as shown at registration\): `([^`]+)`/.exec(doc) as RegExpExecArray)[1] as string;
const timestamp = Number(row('x-host-timestamp').split(' ')[0]);
const deliveryId = row('x-host-delivery-id');
const body = (/\| raw body \| `([^`]+)`/.exec(doc) as RegExpExecArray)[1] as string;

describe('signature (docs/protocol/http-signing.md)', () => {
  it('signs the worked example exactly', () => {
    const headers = signRequest(secret, body, { timestamp, deliveryId });
    expect(headers['x-host-signature']).toBe((/\| `x-host-signature` \| `(v1=[0-9a-f]{64})`/.exec(doc) as RegExpExecArray)[1]);
    expect(signRequest(secret, '', { timestamp, deliveryId })['x-host-signature']).toBe(
      (/give\s+`(v1=[0-9a-f]{64})`/.exec(doc) as RegExpExecArray)[1],
    );
  });

  it('verifies the example at its own time and refuses it 301 s later', () => {
    const headers = signRequest(secret, body, { timestamp, deliveryId });
    const at = (s: number) => verifySignature({ headers, rawBody: Buffer.from(body), secrets: [secret], nowMs: s * 1000 });
    expect(at(timestamp + 300)).toEqual({ ok: true, deliveryId, timestamp });
    expect(at(timestamp + 301)).toMatchObject({ ok: false, code: 'signature.expired' });
    expect(at(timestamp - 301)).toMatchObject({ ok: false, code: 'signature.expired', message: expect.stringMatching(/in the future/) });
  });

  it('accepts any of several comma-separated signatures and refuses malformed ones', () => {
    const good = signRequest(secret, body, { timestamp, deliveryId });
    const headers = { ...good, 'x-host-signature': `v1=${'0'.repeat(64)}, ${good['x-host-signature']}` };
    expect(verifySignature({ headers, rawBody: Buffer.from(body), secrets: [secret], nowMs: timestamp * 1000 }).ok).toBe(true);
    const bad = { ...good, 'x-host-signature': 'sha256=abc' };
    expect(verifySignature({ headers: bad, rawBody: Buffer.from(body), secrets: [secret], nowMs: timestamp * 1000 })).toMatchObject({
      code: 'signature.malformed',
    });
  });

  it('remembers delivery ids until they expire and stays bounded', () => {
    const guard = new ReplayGuard(2);
    expect(guard.remember('a', 2000, 1000)).toBe(true);
    expect(guard.remember('a', 2000, 1500)).toBe(false);
    expect(guard.remember('a', 4000, 2500)).toBe(true);
    guard.remember('b', 5000, 2500);
    guard.remember('c', 5000, 2500);
    expect(guard.size).toBe(2);
  });
});
