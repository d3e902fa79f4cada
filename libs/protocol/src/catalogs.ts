import { Capability } from './capabilities';
import { ERROR_FAMILIES, PACK_ERRORS, type ErrorInfo } from './error-codes';
import { HTTP_HEADERS, HTTP_PATHS, SIGNATURE_VERSION } from './http';
import { HTTP_DEFAULTS, LIMITS, PROTOCOL_VERSION, RUNTIME_DEFAULTS } from './limits';
import { HOST_STDIO_FLAG, STDIO_TRANSPORT } from './manifest';
import { METHOD_LIST } from './methods';
import { PERMISSION_NAMES, PERMISSIONS } from './permissions';
import { RPC_ERROR_HELP, RpcErrorCode, type RpcErrorName } from './rpc-errors';
import { SCHEMA_BASE_URI } from './json-schema';
import { SDK_SHARED_ERRORS } from './sdk-error-codes';
import { RELEASE_VERSIONS } from './versions';

/**
 * The protocol's catalogues as plain JSON, committed under
 * libs/protocol/catalog/ beside the JSON Schema: what the Python, Go and C#
 * generators read for constants (error codes and their messages, JSON-RPC
 * codes, permissions, capabilities, limits and defaults, wire names). Each
 * file is generated from the code that defines the values here, and a test
 * fails when a committed file differs.
 */
export function buildCatalogs(): Record<string, object> {
  const file = (name: string, description: string, body: object) => ({
    [name]: { $id: SCHEMA_BASE_URI + 'catalog/' + name, description, ...body },
  });
  const entries = (codes: Record<string, ErrorInfo>) =>
    Object.entries(codes).map(([code, info]) => ({
      code,
      ...(info.status !== undefined ? { status: info.status } : {}),
      message: info.message,
    }));
  const families = Object.entries(ERROR_FAMILIES).map(([name, codes]) => ({ family: name, codes: entries(codes) }));
  return {
    ...file(
      'error-codes.json',
      'Stable string error codes a plugin can meet, by family, with the HTTP status where a plugin HTTP endpoint answers with one and the message that says what to do. The host keeps its own codes (admin API, installer, QQ Bot) out of this catalogue.',
      {
        families,
      },
    ),
    ...file(
      'sdk-error-codes.json',
      'Local error codes every protocol v2 SDK raises for mistakes in how a plugin uses it; they never cross the wire. An SDK uses these codes with these meanings, words its messages in its own API names, and keeps codes only it has in a family of its own.',
      {
        codes: entries(SDK_SHARED_ERRORS),
      },
    ),
    ...file(
      'pack-error-codes.json',
      'Error codes every plugin packer (host-plugin pack, the Python, Go and C# SDK packers) reports for the same failure; they never cross the wire.',
      {
        codes: entries(PACK_ERRORS),
      },
    ),
    ...file('rpc-error-codes.json', 'Numeric JSON-RPC error codes of the stdio transport.', {
      codes: Object.entries(RpcErrorCode).map(([name, code]) => ({ name, code, help: RPC_ERROR_HELP[name as RpcErrorName] })),
    }),
    ...file('permissions.json', 'Permissions a plugin may declare, with the reason shown to the operator and the methods that need each.', {
      permissions: PERMISSION_NAMES.map((name) => ({
        name,
        description: PERMISSIONS[name],
        methods: METHOD_LIST.filter((m) => m.permission === name).map((m) => m.method),
      })),
    }),
    ...file('capabilities.json', 'Capability bit flags of an HTTP plugin manifest.', { flags: Capability }),
    ...file('limits.json', 'Numeric limits and defaults of protocol v2.', {
      protocolVersion: PROTOCOL_VERSION,
      limits: LIMITS,
      runtimeDefaults: RUNTIME_DEFAULTS,
      httpDefaults: HTTP_DEFAULTS,
    }),
    ...file(
      'versions.json',
      'The SDK version every protocol v2 SDK carries, the protocol version, the SDK versions the host runs and the host versions this SDK runs on (source: libs/protocol/src/versions.json).',
      { ...RELEASE_VERSIONS },
    ),
    ...file(
      'wire.json',
      'Names on the wire: the stdio protocol-mode flag and transport, JSON-RPC methods, HTTP paths, headers and the signature version.',
      {
        stdio: { flag: HOST_STDIO_FLAG, transport: STDIO_TRANSPORT },
        methods: METHOD_LIST.map((m) => ({
          method: m.method,
          direction: m.direction,
          ...(m.permission ? { permission: m.permission } : {}),
        })),
        http: { paths: HTTP_PATHS, headers: HTTP_HEADERS, signatureVersion: SIGNATURE_VERSION },
      },
    ),
  };
}
