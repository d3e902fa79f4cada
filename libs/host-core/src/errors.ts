import { HOST_ERROR_CATALOG, type HostErrorCode } from '@host/host-errors';
import type { ValidationIssue } from '@host/protocol';

/** A validation issue of a host answer: a wire code, or a field issue of the host's own request bodies. */
export type HostValidationIssue = Omit<ValidationIssue, 'code'> & { code: HostErrorCode };

/**
 * Specifics of an error: always an object, never a bare array. Validation
 * failures go in `issues` (each `{code, path, message}`); other facts (the
 * entry, the limit, the URL, the pending update) sit beside it.
 */
export type ErrorDetails = { readonly issues?: readonly HostValidationIssue[]; readonly [key: string]: unknown };

/**
 * A failure a user can act on, with a stable code from the host's error
 * catalogue (the protocol's wire codes and the host's own, @host/host-errors). The admin API turns it into
 * `{"error": {"code", "message", "details"}}` with the catalogue's status.
 */
export class HostError extends Error {
  readonly code: HostErrorCode;
  readonly status: number;
  readonly details?: ErrorDetails;

  constructor(code: HostErrorCode, message?: string, details?: ErrorDetails) {
    const info = HOST_ERROR_CATALOG[code] as { status?: number; message: string };
    super(message ?? info.message);
    this.name = 'HostError';
    this.code = code;
    this.status = info.status ?? 400;
    this.details = details;
  }

  toJSON(): { code: HostErrorCode; message: string; details?: ErrorDetails } {
    return { code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) };
  }
}

/**
 * `details` of an error from elsewhere (another copy of this library, a
 * dependency) in the one shape: an object. A bare array is taken as the
 * validation issues, `{issues}`; any other non-object value is kept as `{value}`.
 */
export function toErrorDetails(value: unknown): ErrorDetails | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return { issues: value as HostValidationIssue[] };
  return typeof value === 'object' ? (value as ErrorDetails) : { value };
}

export function isHostError(e: unknown): e is HostError {
  return e instanceof HostError;
}

/**
 * The one shape of a request that failed validation, in every router:
 * BAD_REQUEST with `details.issues` (each `{code, path, message}`).
 */
export function invalidRequest(what: string, issues: readonly HostValidationIssue[]): HostError {
  return new HostError('BAD_REQUEST', `The ${what} is not valid: ${issues[0]?.message ?? 'see details'}`, { issues });
}
