import type { CircuitBreaker, CircuitState } from './circuit-breaker';

/**
 * Health of an HTTP plugin as the plugins API shows it:
 * - `healthy`: the last deliveries worked (or none was made yet);
 * - `degraded`: the circuit is closed but a delivery failed recently
 *   (the last one, or any within the last minute);
 * - `unreachable`: the circuit is open (or half-open, probing).
 */
export type HttpHealthStatus = 'healthy' | 'degraded' | 'unreachable';

export interface HttpPluginHealth {
  status: HttpHealthStatus;
  circuit: CircuitState;
  consecutiveFailures: number;
  lastError: { code: string; message: string; at: string } | null;
  /** The last thing the host ignored or refused in a response that was otherwise fine. */
  lastWarning: { code: string; message: string; at: string } | null;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  /** While the circuit is open: when the next probe may go out. */
  nextProbeAt: string | null;
}

/** A failure this recent still shows as `degraded` after a success. */
export const DEGRADED_WINDOW_MILLISECONDS = 60_000;

export class HealthTracker {
  private lastError: HttpPluginHealth['lastError'] = null;
  private lastWarning: HttpPluginHealth['lastWarning'] = null;
  private lastSuccess: number | undefined;
  private lastFailure: number | undefined;

  constructor(
    private readonly breaker: CircuitBreaker,
    private readonly now: () => number,
  ) {}

  success(): void {
    this.lastSuccess = this.now();
  }

  failure(code: string, message: string): void {
    this.lastFailure = this.now();
    this.lastError = { code, message, at: new Date(this.lastFailure).toISOString() };
  }

  warning(code: string, message: string): void {
    this.lastWarning = { code, message, at: new Date(this.now()).toISOString() };
  }

  snapshot(): HttpPluginHealth {
    const circuit = this.breaker.state;
    const recent = this.lastFailure !== undefined && this.now() - this.lastFailure < DEGRADED_WINDOW_MILLISECONDS;
    const status: HttpHealthStatus =
      circuit !== 'closed' ? 'unreachable' : this.breaker.consecutiveFailures > 0 || recent ? 'degraded' : 'healthy';
    const iso = (t: number | undefined): string | null => (t === undefined ? null : new Date(t).toISOString());
    return {
      status,
      circuit,
      consecutiveFailures: this.breaker.consecutiveFailures,
      lastError: this.lastError,
      lastWarning: this.lastWarning,
      lastSuccessAt: iso(this.lastSuccess),
      lastFailureAt: iso(this.lastFailure),
      nextProbeAt: iso(this.breaker.nextProbeAt),
    };
  }
}
