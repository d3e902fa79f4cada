/**
 * Consecutive-failure circuit breaker of one HTTP plugin.
 *
 *   closed --(N failures in a row)--> open --(openMilliseconds pass)--> half-open
 *   half-open: exactly one delivery (the probe) goes through;
 *     success -> closed, failure -> open again for another openMilliseconds.
 *
 * While open, deliveries fail at once with `http.circuit_open` instead of
 * each waiting for a timeout against a service that is down.
 */
export interface CircuitOptions {
  /** Consecutive failed deliveries that open the circuit. */
  failureThreshold: number;
  /** How long the circuit stays open before one probe is let through. */
  openMilliseconds: number;
}

export const DEFAULT_CIRCUIT_OPTIONS: CircuitOptions = Object.freeze({ failureThreshold: 5, openMilliseconds: 30_000 });

export type CircuitState = 'closed' | 'open' | 'half-open';

/** `pass`: normal delivery; `probe`: the one trial delivery of half-open; `reject`: fail fast. */
export type CircuitDecision = 'pass' | 'probe' | 'reject';

export class CircuitBreaker {
  private stateValue: CircuitState = 'closed';
  private failures = 0;
  private openedAt = 0;
  private probing = false;

  constructor(
    private readonly options: CircuitOptions = DEFAULT_CIRCUIT_OPTIONS,
    private readonly now: () => number = Date.now,
  ) {}

  get state(): CircuitState {
    return this.stateValue;
  }

  get consecutiveFailures(): number {
    return this.failures;
  }

  /** When the next probe may go out, while the circuit is open. */
  get nextProbeAt(): number | undefined {
    return this.stateValue === 'closed' ? undefined : this.openedAt + this.options.openMilliseconds;
  }

  /** Whether a delivery would be let through now, without taking the probe slot. */
  canPass(): boolean {
    if (this.stateValue === 'closed') return true;
    return !this.probing && this.now() >= this.openedAt + this.options.openMilliseconds;
  }

  /** Decides for one delivery; a `probe` must be followed by recordSuccess or recordFailure. */
  acquire(): CircuitDecision {
    if (this.stateValue === 'closed') return 'pass';
    if (!this.canPass()) return 'reject';
    this.stateValue = 'half-open';
    this.probing = true;
    return 'probe';
  }

  recordSuccess(): void {
    this.stateValue = 'closed';
    this.failures = 0;
    this.probing = false;
  }

  recordFailure(): void {
    this.failures += 1;
    this.probing = false;
    if (this.stateValue === 'half-open' || (this.stateValue === 'closed' && this.failures >= this.options.failureThreshold)) {
      this.stateValue = 'open';
      this.openedAt = this.now();
    }
  }
}
