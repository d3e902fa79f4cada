import { API_ERRORS } from '@host/host-errors';
import { HostError } from './errors';

/** Whether the host's store answers, as far as it knows. */
export interface StoreAvailabilityState {
  reachable: boolean;
  /** Since when it has not answered (ISO time), while unreachable. */
  since?: string;
  /** What the last attempt found, while unreachable. */
  reason?: string;
}

/**
 * Whether the host's store can be used now. Only a store on a database server
 * (PostgreSQL) can be away while the host runs; the files and the embedded
 * database have none of this.
 */
export interface StoreAvailability {
  /** What the last statements and the listening connection found, without asking the server (for every request). */
  current(): StoreAvailabilityState;
  /** Asks the server now, within a short deadline. */
  check(): Promise<StoreAvailabilityState>;
}

/** The admin API's answer while the store cannot be reached: 503 STORE_UNAVAILABLE with since when and why. */
export function storeUnavailable(state: StoreAvailabilityState): HostError {
  const message = `${API_ERRORS.STORE_UNAVAILABLE.message}${state.reason ? ` The last attempt found: ${state.reason}.` : ''}`;
  return new HostError('STORE_UNAVAILABLE', message, {
    ...(state.since ? { since: state.since } : {}),
    ...(state.reason ? { reason: state.reason } : {}),
  });
}

/**
 * Refuses with STORE_UNAVAILABLE unless the store answers: when the last
 * statements found it unreachable, it is asked once more, so the first
 * request after it came back goes through.
 */
export async function requireStore(availability: StoreAvailability | undefined): Promise<void> {
  if (!availability || availability.current().reachable) return;
  const state = await availability.check();
  if (!state.reachable) throw storeUnavailable(state);
}

/**
 * Whether `e` says a database server cannot be reached or went away (as
 * opposed to a statement it refused): the connection was refused, reset,
 * timed out or ended; the server is starting, shutting down, or ended the
 * session (SQLSTATE class 08, 57P01 to 57P03, 53300 too many connections).
 */
export function isConnectionError(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') {
    if (/^08/.test(code) || ['57P01', '57P02', '57P03', '53300'].includes(code)) return true;
    if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN'].includes(code))
      return true;
  }
  const message = e instanceof Error ? e.message : '';
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable/i.test(
    message,
  );
}
