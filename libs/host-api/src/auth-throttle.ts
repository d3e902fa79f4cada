import { isIPv4, isIPv6 } from 'node:net';

export interface AuthThrottleOptions {
  /** Wrong tokens (sign-in and bearer together) one client address may send per minute before it is refused (default 10). */
  perAddressPerMinute?: number;
  /**
   * Wrong tokens from all addresses together per minute before every address is refused (default 50). Throttled
   * attempts are not checked and do not count, so one address adds at most `perAddressPerMinute` to it: it takes
   * several addresses guessing at once to reach it.
   */
  globalPerMinute?: number;
  /** Lines about failures and throttling written per minute; the rest are counted and reported with the next line (default 20). */
  logLinesPerMinute?: number;
  /** Addresses remembered at once; beyond it those with no failure in the last minute are forgotten first (default 10,000). */
  maxAddresses?: number;
  log?: (message: string) => void;
  now?: () => number;
}

export const DEFAULT_AUTH_THROTTLE = {
  perAddressPerMinute: 10,
  globalPerMinute: 50,
  logLinesPerMinute: 20,
  maxAddresses: 10_000,
} as const;

/** How admin credentials were refused since the host started; read by whatever reports the host's counters. */
export interface AuthCounters {
  /** Sign-ins with a wrong admin token. */
  signInFailures: number;
  /** Sign-ins refused unchecked with SESSION_SIGN_IN_THROTTLED. */
  signInThrottled: number;
  /** /api requests with a wrong or malformed `Authorization: Bearer` token. */
  bearerFailures: number;
  /** /api requests refused unchecked with AUTH_THROTTLED. */
  bearerThrottled: number;
  /** Lines about these that were not written because of the log's own rate limit. */
  logLinesSuppressed: number;
}

export type AuthAttempt = 'sign-in' | 'bearer';

const MINUTE_MS = 60_000;

/**
 * The key a client address is throttled under: an IPv4 address as it is (IPv4-mapped IPv6 included), an IPv6
 * address by its /64 prefix, since one host commonly holds a whole /64 and could otherwise take a new address
 * for every guess.
 */
export function throttleKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/**
 * Throttles admin token guessing per client address, with a small ceiling for
 * all addresses together: a client sending wrong tokens is refused after a few
 * in a minute while the operator, from another address, still signs in. Every
 * failure and refusal is counted and logged with its address; the log lines
 * are rate-limited themselves.
 */
export class AuthThrottle {
  readonly counters: AuthCounters = { signInFailures: 0, signInThrottled: 0, bearerFailures: 0, bearerThrottled: 0, logLinesSuppressed: 0 };
  private readonly o: Required<Omit<AuthThrottleOptions, 'log'>> & Pick<AuthThrottleOptions, 'log'>;
  /** Failure times of the last minute per address key, oldest first; a Map keeps the least recently failing first. */
  private readonly byAddress = new Map<string, number[]>();
  private global: number[] = [];
  private logTimes: number[] = [];
  private suppressedSinceLast = 0;

  constructor(options: AuthThrottleOptions = {}) {
    this.o = { ...DEFAULT_AUTH_THROTTLE, now: Date.now, ...options };
  }

  /** Whether an attempt from `address` is refused unchecked; a refusal is counted and logged. */
  throttled(address: string | undefined, attempt: AuthAttempt): boolean {
    const now = this.o.now();
    const key = throttleKey(address);
    const mine = this.recent(key, now);
    this.global = this.global.filter((t) => t > now - MINUTE_MS);
    const byAddress = mine.length >= this.o.perAddressPerMinute;
    if (!byAddress && this.global.length < this.o.globalPerMinute) return false;
    if (attempt === 'sign-in') this.counters.signInThrottled++;
    else this.counters.bearerThrottled++;
    this.write(
      now,
      byAddress
        ? `${attempt === 'sign-in' ? 'sign-in' : 'bearer token'} from ${address ?? 'an unknown address'} throttled: ${mine.length} wrong admin tokens from it in the last minute`
        : `${attempt === 'sign-in' ? 'sign-in' : 'bearer token'} from ${address ?? 'an unknown address'} throttled: ${this.global.length} wrong admin tokens from all addresses in the last minute`,
    );
    return true;
  }

  /** Records a wrong token from `address`. */
  failed(address: string | undefined, attempt: AuthAttempt): void {
    const now = this.o.now();
    const key = throttleKey(address);
    const mine = this.recent(key, now);
    mine.push(now);
    if (mine.length > this.o.perAddressPerMinute) mine.shift();
    // Most recently failing last, so the oldest are the first forgotten.
    this.byAddress.delete(key);
    this.byAddress.set(key, mine);
    this.forgetBeyondBound(now);
    this.global.push(now);
    if (this.global.length > this.o.globalPerMinute) this.global.shift();
    if (attempt === 'sign-in') this.counters.signInFailures++;
    else this.counters.bearerFailures++;
    this.write(
      now,
      `${attempt === 'sign-in' ? 'sign-in with a wrong admin token' : 'wrong bearer token'} from ${address ?? 'an unknown address'}`,
    );
  }

  /** Addresses remembered now (bounded by maxAddresses). */
  get addressCount(): number {
    return this.byAddress.size;
  }

  private recent(key: string, now: number): number[] {
    const times = this.byAddress.get(key);
    if (!times) return [];
    const left = times.filter((t) => t > now - MINUTE_MS);
    if (left.length === 0) this.byAddress.delete(key);
    else this.byAddress.set(key, left);
    return left;
  }

  private forgetBeyondBound(now: number): void {
    if (this.byAddress.size <= this.o.maxAddresses) return;
    for (const [key, times] of this.byAddress) {
      if (this.byAddress.size <= this.o.maxAddresses) return;
      if (times[times.length - 1]! <= now - MINUTE_MS) this.byAddress.delete(key);
    }
    // Still too many: the least recently failing go; the global ceiling still bounds what they can do.
    for (const key of this.byAddress.keys()) {
      if (this.byAddress.size <= this.o.maxAddresses) return;
      this.byAddress.delete(key);
    }
  }

  private write(now: number, line: string): void {
    if (!this.o.log) return;
    this.logTimes = this.logTimes.filter((t) => t > now - MINUTE_MS);
    if (this.logTimes.length >= this.o.logLinesPerMinute) {
      this.suppressedSinceLast++;
      this.counters.logLinesSuppressed++;
      return;
    }
    this.logTimes.push(now);
    const suppressed = this.suppressedSinceLast;
    this.suppressedSinceLast = 0;
    this.o.log(suppressed > 0 ? `${line} (${suppressed} similar lines left out before this one)` : line);
  }
}
