import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { buildConnector } from 'undici';
import { checkAddress, type AddressPolicy } from './address-policy';
import { HttpTransportError, connectFailure } from './transport-error';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has. Injected in tests. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/** The system resolver (`dns.lookup` with `all`), which honours /etc/hosts like every other client. */
export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

export interface ConnectOptions {
  policy: AddressPolicy;
  resolver?: Resolver;
  /** Limit for name resolution plus TCP (and TLS) connect. */
  connectTimeoutMilliseconds: number;
  /** Extra TLS options, e.g. `ca` for a private certificate authority. */
  tls?: { ca?: string | Buffer | Array<string | Buffer>; rejectUnauthorized?: boolean };
}

function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Resolves `hostname`, checks every address against the policy, and returns
 * the address to connect to. Refusing when any address is refused (not just
 * the first) means a name that mixes a public and a metadata address is
 * treated as hostile, whatever order the resolver returns.
 */
export async function resolveChecked(hostname: string, options: ConnectOptions): Promise<ResolvedAddress> {
  const bare = hostname.replace(/^\[|\]$/g, '');
  let addresses: ResolvedAddress[];
  if (isIP(bare)) {
    addresses = [{ address: bare, family: isIP(bare) === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await withTimeout(
        (options.resolver ?? systemResolver)(bare),
        options.connectTimeoutMilliseconds,
        () => new HttpTransportError('timeout', `Resolving ${bare} timed out.`, { beforeRequestSent: true, details: { hostname: bare } }),
      );
    } catch (e) {
      if (e instanceof HttpTransportError) throw e;
      throw new HttpTransportError('unreachable', `The host name ${bare} does not resolve: ${(e as Error).message}`, {
        beforeRequestSent: true,
        details: { hostname: bare, cause: (e as { code?: string }).code },
        cause: e,
      });
    }
    if (addresses.length === 0) {
      throw new HttpTransportError('unreachable', `The host name ${bare} resolves to no address.`, {
        beforeRequestSent: true,
        details: { hostname: bare },
      });
    }
  }
  const refused = addresses
    .map((a) => ({ address: a.address, verdict: checkAddress(a.address, options.policy) }))
    .filter((a) => !a.verdict.allowed)
    .map((a) => ({ address: a.address, category: a.verdict.category, reason: (a.verdict as { reason: string }).reason }));
  if (refused.length > 0) {
    throw new HttpTransportError('address_refused', `${bare} is refused by the address policy: ${refused[0]!.reason}.`, {
      beforeRequestSent: true,
      details: { hostname: bare, addresses: addresses.map((a) => a.address), refused },
    });
  }
  return addresses[0]!;
}

/**
 * An undici `connect` function that resolves and checks the host itself and
 * then connects to exactly the checked address. The URL (and so the Host
 * header and the TLS server name) keeps the original host name; only the
 * socket's destination is pinned. Each new connection resolves again, so a
 * plugin that moves keeps working, and every address used is one that was
 * checked: DNS rebinding between a check and a connect cannot happen because
 * there is no second lookup.
 */
export function createPinnedConnector(options: ConnectOptions): buildConnector.connector {
  const base = buildConnector({ timeout: options.connectTimeoutMilliseconds, ...options.tls });
  return (connectOptions, callback) => {
    const target = `${connectOptions.protocol}//${connectOptions.host ?? connectOptions.hostname}`;
    resolveChecked(connectOptions.hostname, options).then(
      (resolved) => {
        const hostIsName = isIP(connectOptions.hostname.replace(/^\[|\]$/g, '')) === 0;
        base(
          {
            ...connectOptions,
            hostname: resolved.address,
            // SNI and certificate checks use the name, never the pinned address.
            servername: connectOptions.servername || (hostIsName ? connectOptions.hostname : undefined),
          },
          (err, socket) => {
            if (err) callback(connectFailure(err, resolved.address, target), null);
            else callback(null, socket!);
          },
        );
      },
      (err) => callback(connectFailure(err, undefined, target), null),
    );
  };
}
