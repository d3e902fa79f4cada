import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HTTP_HEADERS } from '@host/protocol';
import { computeSignature, generateSigningSecret, signRequest } from './signing';

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
