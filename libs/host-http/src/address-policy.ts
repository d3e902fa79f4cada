import { isIP } from 'node:net';

/**
 * Which addresses the host may connect to when it calls an HTTP plugin.
 *
 * Link-local (cloud metadata lives there), unspecified, multicast, broadcast
 * and reserved addresses, and the known metadata addresses outside
 * link-local, are always refused. Loopback and private ranges depend on the
 * policy: the embedded default allows both, because the host binds to
 * 127.0.0.1 and operators run their plugins beside it. A host reachable from
 * untrusted users should set both to false (see libs/host-http/README.md).
 */
export interface AddressPolicy {
  /** 127.0.0.0/8 and ::1. */
  allowLoopback: boolean;
  /** 10/8, 172.16/12, 192.168/16, 100.64/10 (carrier-grade NAT), fc00::/7, fec0::/10. */
  allowPrivate: boolean;
}

export const DEFAULT_ADDRESS_POLICY: AddressPolicy = Object.freeze({ allowLoopback: true, allowPrivate: true });

export type AddressCategory =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'metadata'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved';

const ALWAYS_REFUSED: ReadonlySet<AddressCategory> = new Set(['link-local', 'metadata', 'unspecified', 'multicast', 'broadcast', 'reserved']);

export type AddressVerdict = { allowed: true; category: AddressCategory } | { allowed: false; category: AddressCategory; reason: string };

interface Range {
  base: bigint;
  bits: number;
  category: AddressCategory;
}

function v4(cidr: string, category: AddressCategory): Range {
  const [ip, bits] = cidr.split('/') as [string, string];
  return { base: parseIPv4(ip), bits: Number(bits), category };
}
function v6(cidr: string, category: AddressCategory): Range {
  const [ip, bits] = cidr.split('/') as [string, string];
  return { base: parseIPv6(ip), bits: Number(bits), category };
}

// Most specific first: the first match decides.
const V4_RANGES: Range[] = [
  v4('100.100.100.200/32', 'metadata'), // Alibaba Cloud metadata
  v4('255.255.255.255/32', 'broadcast'),
  v4('0.0.0.0/8', 'unspecified'),
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.0.0/16', 'link-local'), // includes 169.254.169.254 (AWS, GCP, Azure metadata)
  v4('10.0.0.0/8', 'private'),
  v4('172.16.0.0/12', 'private'),
  v4('192.168.0.0/16', 'private'),
  v4('100.64.0.0/10', 'private'),
  v4('224.0.0.0/4', 'multicast'),
  v4('240.0.0.0/4', 'reserved'),
];

const V6_RANGES: Range[] = [
  v6('fd00:ec2::254/128', 'metadata'), // AWS metadata over IPv6
  v6('::/128', 'unspecified'),
  v6('::1/128', 'loopback'),
  v6('fe80::/10', 'link-local'),
  v6('fec0::/10', 'private'), // deprecated site-local
  v6('fc00::/7', 'private'),
  v6('ff00::/8', 'multicast'),
];

/** IPv6 prefixes that carry an IPv4 address in their low 32 bits. */
const EMBEDDED_V4_PREFIXES: Range[] = [
  v6('::ffff:0:0/96', 'public'), // IPv4-mapped
  v6('64:ff9b::/96', 'public'), // NAT64
  v6('::/96', 'public'), // deprecated IPv4-compatible (after :: and ::1 are handled)
];

function inRange(value: bigint, width: number, range: Range): boolean {
  const shift = BigInt(width - range.bits);
  return value >> shift === range.base >> shift;
}

export function parseIPv4(ip: string): bigint {
  const parts = ip.split('.');
  if (parts.length !== 4) throw new Error(`not an IPv4 address: ${ip}`);
  let out = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) throw new Error(`not an IPv4 address: ${ip}`);
    out = (out << 8n) | BigInt(Number(p));
  }
  return out;
}

/** Parses any textual IPv6 form (with `::`, an IPv4 tail or a zone id) to 128 bits. */
export function parseIPv6(input: string): bigint {
  const ip = input.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  let groups: number[] = [];
  const tailV4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(ip);
  let text = ip;
  let extra: number[] = [];
  if (tailV4) {
    const n = Number(parseIPv4(tailV4[1]!));
    extra = [n >>> 16, n & 0xffff];
    text = ip.slice(0, -tailV4[1]!.length);
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1);
  }
  const halves = text.split('::');
  if (halves.length > 2) throw new Error(`not an IPv6 address: ${input}`);
  const parse = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) throw new Error(`not an IPv6 address: ${input}`);
    return parseInt(g, 16);
  }));
  const head = parse(halves[0]!);
  if (halves.length === 2) {
    const tail = parse(halves[1]!);
    const fill = 8 - head.length - tail.length - extra.length;
    if (fill < 1) throw new Error(`not an IPv6 address: ${input}`);
    groups = [...head, ...new Array<number>(fill).fill(0), ...tail, ...extra];
  } else {
    groups = [...head, ...extra];
  }
  if (groups.length !== 8) throw new Error(`not an IPv6 address: ${input}`);
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

function formatIPv4(n: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => Number((n >> s) & 0xffn)).join('.');
}

/** The category of one address (IPv4, IPv6, or IPv6 embedding an IPv4 address). */
export function classifyAddress(address: string): AddressCategory {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) {
    const n = parseIPv4(bare);
    return V4_RANGES.find((r) => inRange(n, 32, r))?.category ?? 'public';
  }
  if (family !== 6) throw new Error(`not an IP address: ${address}`);
  const n = parseIPv6(bare);
  const direct = V6_RANGES.find((r) => inRange(n, 128, r));
  if (direct) return direct.category;
  if (EMBEDDED_V4_PREFIXES.some((r) => inRange(n, 128, r))) return classifyAddress(formatIPv4(n & 0xffffffffn));
  // 6to4 (2002::/16) carries an IPv4 address in bits 16..47.
  if (n >> 112n === 0x2002n) return classifyAddress(formatIPv4((n >> 80n) & 0xffffffffn));
  return 'public';
}

/** Whether the policy lets the host connect to `address`, and why not. */
export function checkAddress(address: string, policy: AddressPolicy): AddressVerdict {
  const category = classifyAddress(address);
  if (ALWAYS_REFUSED.has(category)) {
    return { allowed: false, category, reason: `${address} is a ${category} address, which the host never calls` };
  }
  if (category === 'loopback' && !policy.allowLoopback) {
    return { allowed: false, category, reason: `${address} is a loopback address and the address policy has allowLoopback off` };
  }
  if (category === 'private' && !policy.allowPrivate) {
    return { allowed: false, category, reason: `${address} is a private address and the address policy has allowPrivate off` };
  }
  return { allowed: true, category };
}
