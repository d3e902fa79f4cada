import { HostError } from '@host/host-core';

export interface BaseUrl {
  /** Normalised form that is stored: `scheme://host[:port][/path]`, no trailing slash. */
  href: string;
  /** `scheme://host[:port]`, what the connection pool is keyed by. */
  origin: string;
  /** Path prefix before `/host/plugin/...`; "" for the root. */
  basePath: string;
  hostname: string;
}

const MAX_URL_LENGTH = 2048;

/**
 * Checks a base URL the operator typed: http or https only, no user name or
 * password, no query or fragment (they would make the endpoint paths
 * ambiguous). Throws REGISTRATION_URL_INVALID or REGISTRATION_URL_CREDENTIALS.
 */
export function parseBaseUrl(input: unknown): BaseUrl {
  if (typeof input !== 'string' || input.trim() === '') {
    throw new HostError(
      'REGISTRATION_URL_INVALID',
      'baseUrl is required: enter the plugin service address, e.g. https://plugin.example.com.',
    );
  }
  const text = input.trim();
  if (text.length > MAX_URL_LENGTH) {
    throw new HostError('REGISTRATION_URL_INVALID', `baseUrl is longer than ${MAX_URL_LENGTH} characters.`);
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new HostError('REGISTRATION_URL_INVALID', `"${text}" is not a URL. Enter it as https://host[:port][/path].`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new HostError('REGISTRATION_URL_INVALID', `The scheme "${url.protocol.replace(/:$/, '')}" is not supported. Use http or https.`);
  }
  if (url.username || url.password) {
    throw new HostError('REGISTRATION_URL_CREDENTIALS');
  }
  if (!url.hostname) {
    throw new HostError('REGISTRATION_URL_INVALID', 'The URL has no host name.');
  }
  if (url.search || url.hash || text.includes('?') || text.includes('#')) {
    throw new HostError(
      'REGISTRATION_URL_INVALID',
      'The base URL must not have a query (?...) or fragment (#...). Enter only scheme, host, port and path.',
    );
  }
  const basePath = url.pathname.replace(/\/+$/, '');
  return { href: `${url.origin}${basePath}`, origin: url.origin, basePath, hostname: url.hostname };
}
