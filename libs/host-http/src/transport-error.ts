/**
 * What went wrong talking to a plugin, independent of whether the caller is
 * registration (REGISTRATION_* codes) or delivery (http.* codes); each caller
 * maps the kind to its own code.
 */
export type TransportErrorKind =
  'address_refused' | 'unreachable' | 'timeout' | 'tls' | 'redirect' | 'status' | 'not_json' | 'too_large' | 'invalid';

export class HttpTransportError extends Error {
  readonly kind: TransportErrorKind;
  /**
   * True when the failure happened while resolving or connecting, before any
   * byte of the request was written, so repeating the request is safe.
   */
  readonly beforeRequestSent: boolean;
  readonly details: Record<string, unknown>;

  constructor(
    kind: TransportErrorKind,
    message: string,
    options: { beforeRequestSent?: boolean; details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HttpTransportError';
    this.kind = kind;
    this.beforeRequestSent = options.beforeRequestSent ?? false;
    this.details = options.details ?? {};
  }
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/;

function codeOf(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Turns an error of the connect phase into an HttpTransportError. */
export function connectFailure(err: unknown, address: string | undefined, target: string): HttpTransportError {
  if (err instanceof HttpTransportError) return err;
  const code = codeOf(err);
  const reason = (err as Error)?.message ?? String(err);
  const details = { target, ...(address ? { address } : {}), ...(code ? { cause: code } : {}) };
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new HttpTransportError('timeout', `Connecting to ${target}${address ? ` (${address})` : ''} timed out.`, {
      beforeRequestSent: true,
      details,
      cause: err,
    });
  }
  if (code && TLS_CODE.test(code)) {
    return new HttpTransportError('tls', `TLS handshake with ${target} failed: ${reason}`, {
      beforeRequestSent: true,
      details,
      cause: err,
    });
  }
  return new HttpTransportError('unreachable', `Could not connect to ${target}${address ? ` (${address})` : ''}: ${reason}`, {
    beforeRequestSent: true,
    details,
    cause: err,
  });
}
