import { checkAddress, classifyAddress, DEFAULT_ADDRESS_POLICY, parseIPv6 } from './address-policy';

const STRICT = { allowLoopback: false, allowPrivate: false };

describe('classifyAddress', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['203.0.113.10', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.254', 'private'],
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['100.100.100.200', 'metadata'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fd00:ec2::254', 'metadata'],
    ['fd12:3456::1', 'private'],
    ['fc00::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:4860:4860::8888', 'public'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['[::ffff:127.0.0.1]', 'loopback'],
    ['::ffff:8.8.8.8', 'public'],
    ['::ffff:100.100.100.200', 'metadata'],
    ['64:ff9b::169.254.169.254', 'link-local'],
    ['::169.254.169.254', 'link-local'],
    ['2002:a9fe:a9fe::1', 'link-local'],
    ['2002:0808:0808::1', 'public'],
  ])('%s is %s', (address, category) => {
    expect(classifyAddress(address)).toBe(category);
  });

  // IPv6 forms that deliver to an embedded IPv4 address are classified by that address.
  it.each([
    ['::ffff:10.0.0.1', 'private'],
    ['::FFFF:7F00:1', 'loopback'],
    ['[::ffff:127.0.0.1%lo]', 'loopback'],
    ['::ffff:0:127.0.0.1', 'loopback'], // IPv4-translated (SIIT, RFC 6145)
    ['::ffff:0:a9fe:a9fe', 'link-local'],
    ['::ffff:0:8.8.8.8', 'public'],
    ['64:ff9b::127.0.0.1', 'loopback'], // NAT64 (RFC 6052)
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b::100.100.100.200', 'metadata'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['2002:7f00:1::', 'loopback'], // 6to4
    ['2002:c0a8:101:1::1', 'private'],
    ['2002:e000:1::1', 'multicast'],
    ['::127.0.0.1', 'loopback'], // deprecated IPv4-compatible
    ['::10.0.0.1', 'private'],
    ['::0.0.0.2', 'unspecified'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'public'], // Teredo: the client address is obfuscated and behind a relay
    ['2001:db8::1', 'public'],
  ])('%s is %s', (address, category) => {
    expect(classifyAddress(address)).toBe(category);
  });

  it.each(['example.com', '0x7f.1', '127.1', '2130706433', '1.2.3.4.5', '::1::', '12345::', ''])(
    'refuses %j, which is not an address',
    (text) => {
      expect(() => classifyAddress(text)).toThrow(/not an IP address/);
    },
  );

  it('parses every IPv6 spelling to the same number', () => {
    expect(parseIPv6('::ffff:169.254.169.254')).toBe(parseIPv6('0:0:0:0:0:ffff:a9fe:a9fe'));
    expect(parseIPv6('2001:db8::1')).toBe(parseIPv6('2001:0db8:0000:0000:0000:0000:0000:0001'));
  });
});

describe('checkAddress', () => {
  it.each([
    '169.254.169.254',
    'fe80::1',
    '0.0.0.0',
    '::',
    '224.0.0.1',
    'ff02::1',
    '255.255.255.255',
    '::ffff:169.254.169.254',
    '100.100.100.200',
    'fd00:ec2::254',
  ])('%s is refused even by the most open policy', (address) => {
    const verdict = checkAddress(address, { allowLoopback: true, allowPrivate: true });
    expect(verdict.allowed).toBe(false);
    expect(verdict.allowed === false && verdict.reason).toMatch(/never calls/);
  });

  it('allows loopback and private addresses by the library default (the host passes its configured policy)', () => {
    expect(DEFAULT_ADDRESS_POLICY).toEqual({ allowLoopback: true, allowPrivate: true });
    for (const a of ['127.0.0.1', '::1', '10.0.0.5', '192.168.0.10', 'fd12::1', '100.64.1.1']) {
      expect(checkAddress(a, DEFAULT_ADDRESS_POLICY).allowed).toBe(true);
    }
  });

  it('refuses loopback and private addresses, also IPv4-mapped, when the policy turns them off', () => {
    for (const a of ['127.0.0.1', '::1', '::ffff:127.0.0.1', '10.0.0.5', '::ffff:192.168.0.1', 'fd12::1', '100.64.1.1']) {
      const verdict = checkAddress(a, STRICT);
      expect(verdict.allowed).toBe(false);
      expect(verdict.allowed === false && verdict.reason).toMatch(/HOST_HTTP_ALLOW_(LOOPBACK|PRIVATE)=true/);
    }
  });

  it('keeps loopback and private separate', () => {
    expect(checkAddress('127.0.0.1', { allowLoopback: true, allowPrivate: false }).allowed).toBe(true);
    expect(checkAddress('10.0.0.1', { allowLoopback: true, allowPrivate: false }).allowed).toBe(false);
    expect(checkAddress('10.0.0.1', { allowLoopback: false, allowPrivate: true }).allowed).toBe(true);
  });

  it('always allows public addresses', () => {
    expect(checkAddress('203.0.113.10', STRICT)).toEqual({ allowed: true, category: 'public' });
  });
});
