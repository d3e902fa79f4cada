import { defineErrors } from '@host/protocol';

/**
 * The codes of the HTTP transport's registration (libs/host-http): why the admin API refused to register an HTTP
 * plugin by its base URL. A plugin never receives them.
 */
export const REGISTRATION_ERRORS = defineErrors({
  REGISTRATION_URL_INVALID: {
    status: 400,
    message: 'The base URL is not a valid http or https URL. Enter it as https://host[:port][/path].',
  },
  REGISTRATION_URL_CREDENTIALS: {
    status: 400,
    message: 'The base URL contains a user name or password. Remove them; the host signs its requests instead.',
  },
  REGISTRATION_ADDRESS_REFUSED: {
    status: 422,
    message: 'The address is not allowed by the host address policy (link-local, metadata, multicast, or private/loopback when disabled).',
    causes:
      'The URL resolves to a loopback or private address, allowed only when the operator enables it (HOST_HTTP_ALLOW_LOOPBACK, HOST_HTTP_ALLOW_PRIVATE; loopback is allowed by default only for a host listening on loopback), or to a link-local or cloud metadata address, never allowed.',
  },
  REGISTRATION_UNREACHABLE: {
    status: 422,
    message: 'The host could not connect to the plugin. Check that the service runs and the URL, port and firewall are right.',
    causes: 'The service is down, the URL or port is wrong, or a firewall blocks the host.',
    fix: 'Try curl {baseUrl}/host/plugin/manifest from the host machine.',
  },
  REGISTRATION_TIMEOUT: {
    status: 422,
    message: 'The plugin did not answer the manifest request in time. Check the service health and its reverse proxy.',
    causes: 'The service is overloaded or starting, or a firewall drops packets instead of refusing them.',
    fix: 'Try curl {baseUrl}/host/plugin/manifest from the host machine.',
  },
  REGISTRATION_REDIRECT: {
    status: 422,
    message: 'The manifest request was redirected; redirects are not followed. Register the final URL.',
    causes: 'A proxy redirects, often http to https or to a path with a trailing slash.',
    fix: 'Register the final URL; the host follows no redirects.',
  },
  REGISTRATION_HTTP_STATUS: {
    status: 422,
    message: 'GET /host/plugin/manifest did not answer 200. Check the base URL and that the service serves the manifest.',
  },
  REGISTRATION_NOT_JSON: { status: 422, message: 'The manifest response is not JSON. The service must answer with application/json.' },
  REGISTRATION_TOO_LARGE: { status: 422, message: 'The manifest response is larger than 256 KiB.' },
  REGISTRATION_MANIFEST_TOO_COMPLEX: {
    status: 422,
    message:
      'The manifest response nests arrays and objects deeper than 64 levels, or one array or object has more than 10,000 entries. Serve the plain manifest.',
  },
  REGISTRATION_MANIFEST_INVALID: {
    status: 422,
    message: 'The manifest does not follow protocol v2. details.issues lists each field and the fix.',
  },
  REGISTRATION_CAPABILITY_MISSING: {
    status: 422,
    message: 'The manifest lacks the ReceiveMessages (1) and HttpTransport (8) capabilities; declare capabilities of at least 9.',
    causes: 'capabilities lacks ReceiveMessages (1) or HttpTransport (8); valid values are 9, 11, 13 or 15.',
  },
  REGISTRATION_PROTOCOL_UNSUPPORTED: { status: 422, message: 'The manifest has a protocolVersion other than 2.' },
  REGISTRATION_ID_TAKEN: {
    status: 409,
    message: 'Another plugin (stdio or HTTP) already uses this pluginId. Remove it first or change the plugin id.',
  },
  REGISTRATION_TLS_FAILED: {
    status: 422,
    message:
      'The TLS handshake with the plugin failed (untrusted, expired or wrong-name certificate). Serve a certificate valid for the base URL host, or trust its CA with NODE_EXTRA_CA_CERTS.',
    causes: 'The certificate is self-signed, expired or for another name.',
    fix: 'Use a valid certificate, or trust its certificate authority on the host (NODE_EXTRA_CA_CERTS).',
  },
});
