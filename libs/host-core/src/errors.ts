import { ERROR_CATALOG, type ErrorCode, type ValidationIssue } from '@host/protocol';

/**
 * A failure a user can act on, with a stable code from the protocol's error
 * catalogue. The admin API turns it into
 * `{"error": {"code", "message", "details"}}` with the catalogue's status.
 */
export class HostError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: unknown;

  constructor(code: ErrorCode, message?: string, details?: unknown) {
    const info = ERROR_CATALOG[code] as { status?: number; message: string };
    super(message ?? info.message);
    this.name = 'HostError';
    this.code = code;
    this.status = info.status ?? 400;
    this.details = details;
  }

  toJSON(): { code: string; message: string; details?: unknown } {
    return { code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) };
  }
}

export function isHostError(e: unknown): e is HostError {
  return e instanceof HostError;
}

/**
 * The one shape of a request that failed validation, in every router:
 * BAD_REQUEST with `details.issues` (each `{code, path, message}`).
 */
export function invalidRequest(what: string, issues: readonly ValidationIssue[]): HostError {
  return new HostError('BAD_REQUEST', `The ${what} is not valid: ${issues[0]?.message ?? 'see details'}`, { issues });
}
