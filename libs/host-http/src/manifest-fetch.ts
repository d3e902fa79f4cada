import { Client } from 'undici';
import { HostError } from '@host/host-core';
import {
  HTTP_DEFAULTS,
  HTTP_HEADERS,
  HTTP_PATHS,
  LIMITS,
  PROTOCOL_VERSION,
  parseHttpManifest,
  parseJsonWithin,
  type HttpManifest,
} from '@host/protocol';
import type { RegistrationErrorCode } from '@host/host-errors';
import { DEFAULT_ADDRESS_POLICY, type AddressPolicy } from './address-policy';
import { parseBaseUrl } from './base-url';
import { exchange } from './exchange';
import { createPinnedConnector, type Resolver } from './pinned-connector';
import { signRequest } from './signing';
import { HttpTransportError, type TransportErrorKind } from './transport-error';

/** How the host reaches plugin services; shared by registration and delivery. */
export interface HttpNetworkOptions {
  policy?: AddressPolicy;
  resolver?: Resolver;
  connectTimeoutMilliseconds?: number;
  /** Extra TLS options, e.g. `ca` for a private certificate authority. */
  tls?: { ca?: string | Buffer | Array<string | Buffer>; rejectUnauthorized?: boolean };
}

export interface FetchManifestOptions extends HttpNetworkOptions {
  /** Deadline for the whole manifest request. */
  timeoutMilliseconds?: number;
  /** When given, the request is signed like every other (over an empty body). */
  signingSecret?: string;
  /** Sent as x-host-plugin-id on refresh, when the id is known. */
  pluginId?: string;
}

const KIND_TO_CODE: Record<TransportErrorKind, RegistrationErrorCode> = {
  address_refused: 'REGISTRATION_ADDRESS_REFUSED',
  unreachable: 'REGISTRATION_UNREACHABLE',
  timeout: 'REGISTRATION_TIMEOUT',
  tls: 'REGISTRATION_TLS_FAILED',
  redirect: 'REGISTRATION_REDIRECT',
  status: 'REGISTRATION_HTTP_STATUS',
  not_json: 'REGISTRATION_NOT_JSON',
  too_large: 'REGISTRATION_TOO_LARGE',
  invalid: 'REGISTRATION_MANIFEST_INVALID',
};

function registrationError(e: unknown, url: string): HostError {
  if (e instanceof HostError) return e;
  if (e instanceof HttpTransportError) {
    return new HostError(KIND_TO_CODE[e.kind], `${e.message} (GET ${url})`, { url, ...e.details });
  }
  return new HostError('REGISTRATION_UNREACHABLE', `GET ${url} failed: ${(e as Error)?.message ?? String(e)}`, { url });
}

/** `application/json`, or any `+json` type, with optional parameters. */
export function isJsonContentType(value: string | string[] | undefined): boolean {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return false;
  const type = v.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/**
 * Fetches `GET {baseUrl}/host/plugin/manifest` with the address policy, no
 * redirects, a connect and a total deadline and a size cap, and validates it.
 * Resolves with the manifest or rejects with a HostError whose code is one
 * of REGISTRATION_*.
 */
export async function fetchHttpManifest(baseUrl: string, options: FetchManifestOptions = {}): Promise<HttpManifest> {
  const base = parseBaseUrl(baseUrl);
  const url = `${base.href}${HTTP_PATHS.manifest}`;
  const client = new Client(base.origin, {
    connect: createPinnedConnector({
      policy: options.policy ?? DEFAULT_ADDRESS_POLICY,
      resolver: options.resolver,
      connectTimeoutMilliseconds: options.connectTimeoutMilliseconds ?? HTTP_DEFAULTS.connectTimeoutMilliseconds,
      tls: options.tls,
    }),
    pipelining: 1,
  });
  try {
    const headers: Record<string, string> = {
      accept: 'application/json',
      [HTTP_HEADERS.protocolVersion]: String(PROTOCOL_VERSION),
      ...(options.pluginId ? { [HTTP_HEADERS.pluginId]: options.pluginId } : {}),
      ...(options.signingSecret ? signRequest(options.signingSecret, '') : {}),
    };
    const res = await exchange(client, {
      method: 'GET',
      path: `${base.basePath}${HTTP_PATHS.manifest}`,
      headers,
      timeoutMilliseconds: options.timeoutMilliseconds ?? HTTP_DEFAULTS.requestTimeoutMilliseconds,
      maxResponseBytes: LIMITS.maxHttpManifestBytes,
    });
    if (res.status >= 300 && res.status < 400) {
      const location = res.headers['location'];
      throw new HostError(
        'REGISTRATION_REDIRECT',
        `GET ${url} answered ${res.status}${location ? ` redirecting to ${String(location)}` : ''}; redirects are not followed. Register the final URL.`,
        {
          url,
          status: res.status,
          ...(location ? { location: String(location) } : {}),
        },
      );
    }
    if (res.status !== 200) {
      throw new HostError('REGISTRATION_HTTP_STATUS', `GET ${url} answered ${res.status}, expected 200 with the manifest.`, {
        url,
        status: res.status,
      });
    }
    if (!isJsonContentType(res.headers['content-type'])) {
      throw new HostError(
        'REGISTRATION_NOT_JSON',
        `GET ${url} answered with content-type "${String(res.headers['content-type'] ?? 'none')}"; serve the manifest as application/json.`,
        {
          url,
          contentType: res.headers['content-type'] ?? null,
        },
      );
    }
    const read = parseJsonWithin(res.body.toString('utf8'));
    if (!read.ok && read.reason === 'shape') {
      throw new HostError('REGISTRATION_MANIFEST_TOO_COMPLEX', `GET ${url} answered with a manifest that is refused: ${read.message}.`, {
        url,
      });
    }
    if (!read.ok) {
      throw new HostError('REGISTRATION_NOT_JSON', `GET ${url} answered with a body that is not valid JSON: ${read.message}`, { url });
    }
    const json = read.value;
    const parsed = parseHttpManifest(json);
    if (parsed.ok) return parsed.value;
    const issues = parsed.issues;
    const code: RegistrationErrorCode = issues.some((i) => i.code === 'manifest.protocolVersion.unsupported')
      ? 'REGISTRATION_PROTOCOL_UNSUPPORTED'
      : issues.some((i) => i.code === 'manifest.capabilities.missing')
        ? 'REGISTRATION_CAPABILITY_MISSING'
        : 'REGISTRATION_MANIFEST_INVALID';
    throw new HostError(code, `The manifest at ${url} is not valid: ${issues.map((i) => i.message).join(' ')}`, { url, issues });
  } catch (e) {
    throw registrationError(e, url);
  } finally {
    // destroy, not close: nothing else uses this one-off connection.
    client.destroy().catch(() => undefined);
  }
}
