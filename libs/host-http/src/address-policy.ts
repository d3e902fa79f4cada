import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which addresses the host may connect to when it calls an HTTP plugin.
 *
 * Link-local (cloud metadata lives there), unspecified, multicast, broadcast
 * and reserved addresses, and the known metadata addresses outside
 * link-local, are always refused. Loopback and private ranges depend on the
 * policy, which the host takes from its configuration (HOST_HTTP_ALLOW_LOOPBACK,
 * HOST_HTTP_ALLOW_PRIVATE). The library default allows both, for tests and
 * embedding; the host passes its own.
 */
export interface AddressPolicy {
  /** 127.0.0.0/8 and ::1. */
  allowLoopback: boolean;
  /** 10/8, 172.16/12, 192.168/16, 100.64/10 (carrier-grade NAT), fc00::/7, fec0::/10. */
  allowPrivate: boolean;
}

export const DEFAULT_ADDRESS_POLICY: AddressPolicy = Object.freeze({ allowLoopback: true, allowPrivate: true });

export type AddressCategory =
  'public' | 'loopback' | 'private' | 'link-local' | 'metadata' | 'unspecified' | 'multicast' | 'broadcast' | 'reserved';

const ALWAYS_REFUSED: ReadonlySet<AddressCategory> = new Set([
  'link-local',
  'metadata',
  'unspecified',
  'multicast',
  'broadcast',
  'reserved',
]);

export type AddressVerdict = { allowed: true; category: AddressCategory } | { allowed: false; category: AddressCategory; reason: string };

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];
type Range = { cidr: Cidr; category: AddressCategory };

const range = (cidr: string, category: AddressCategory): Range => ({ cidr: ipaddr.parseCIDR(cidr), category });

// The policy as data; ipaddr.js parses and matches. Most specific first: the first match decides.
const V4_RANGES: Range[] = [
  range('100.100.100.200/32', 'metadata'), // Alibaba Cloud metadata
  range('255.255.255.255/32', 'broadcast'),
  range('0.0.0.0/8', 'unspecified'),
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link-local'), // includes 169.254.169.254 (AWS, GCP, Azure metadata)
  range('10.0.0.0/8', 'private'),
  range('172.16.0.0/12', 'private'),
  range('192.168.0.0/16', 'private'),
  range('100.64.0.0/10', 'private'),
  range('224.0.0.0/4', 'multicast'),
  range('240.0.0.0/4', 'reserved'),
];

const V6_RANGES: Range[] = [
  range('fd00:ec2::254/128', 'metadata'), // AWS metadata over IPv6
  range('::/128', 'unspecified'),
  range('::1/128', 'loopback'),
  range('fe80::/10', 'link-local'),
  range('fec0::/10', 'private'), // deprecated site-local
  range('fc00::/7', 'private'),
  range('ff00::/8', 'multicast'),
];

/** Deprecated IPv4-compatible addresses (::a.b.c.d), checked after :: and ::1; ipaddr.js calls them unicast. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96') as [ipaddr.IPv6, number];

/** The IPv4 address an IPv6 address carries, for the forms that deliver to it. */
function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const bytes = ip.toByteArray();
  switch (ip.range()) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d, IPv4-translated (SIIT)
    case 'rfc6052': // 64:ff9b::a.b.c.d, NAT64
      return new ipaddr.IPv4(bytes.slice(12));
    case '6to4': // 2002:AABB:CCDD::/48
      return new ipaddr.IPv4(bytes.slice(2, 6));
    default:
      return ip.match(IPV4_COMPATIBLE) ? new ipaddr.IPv4(bytes.slice(12)) : undefined;
  }
}

/**
 * Parses any textual IPv6 form (with `::`, an IPv4 tail, brackets or a zone
 * id). ipaddr.js 1.9 refuses an IPv4 tail right after `::` (`::1.2.3.4`,
 * `64:ff9b::1.2.3.4`), so the tail is written as two hex groups first.
 */
function parseV6(input: string): ipaddr.IPv6 {
  const ip = input.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIP(ip) !== 6) throw new Error(`not an IPv6 address: ${input}`);
  const hexTail = ip.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_all, a: string, b: string, c: string, d: string) =>
    [(Number(a) << 8) | Number(b), (Number(c) << 8) | Number(d)].map((g) => g.toString(16)).join(':'),
  );
  return ipaddr.IPv6.parse(hexTail);
}

/** The 128-bit value of an IPv6 address in any spelling. */
export function parseIPv6(input: string): bigint {
  return parseV6(input)
    .toByteArray()
    .reduce((acc, byte) => (acc << 8n) | BigInt(byte), 0n);
}

/** The category of one address (IPv4, IPv6, or IPv6 embedding an IPv4 address). */
export function classifyAddress(address: string): AddressCategory {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  // node:net decides what is an address: ipaddr.js alone would also take forms such as 0x7f.1.
  if (family === 4) {
    const ip = ipaddr.IPv4.parse(bare);
    return V4_RANGES.find((r) => ip.match(r.cidr as [ipaddr.IPv4, number]))?.category ?? 'public';
  }
  if (family !== 6) throw new Error(`not an IP address: ${address}`);
  const ip = parseV6(bare);
  const direct = V6_RANGES.find((r) => ip.match(r.cidr as [ipaddr.IPv6, number]));
  if (direct) return direct.category;
  const v4 = embeddedIPv4(ip);
  return v4 ? classifyAddress(v4.toString()) : 'public';
}

/** Whether the policy lets the host connect to `address`, and why not. */
export function checkAddress(address: string, policy: AddressPolicy): AddressVerdict {
  const category = classifyAddress(address);
  if (ALWAYS_REFUSED.has(category)) {
    return { allowed: false, category, reason: `${address} is a ${category} address, which the host never calls` };
  }
  if (category === 'loopback' && !policy.allowLoopback) {
    return {
      allowed: false,
      category,
      reason: `${address} is a loopback address, which this host does not call (allow it with HOST_HTTP_ALLOW_LOOPBACK=true)`,
    };
  }
  if (category === 'private' && !policy.allowPrivate) {
    return {
      allowed: false,
      category,
      reason: `${address} is a private address, which this host does not call (allow it with HOST_HTTP_ALLOW_PRIVATE=true)`,
    };
  }
  return { allowed: true, category };
}
