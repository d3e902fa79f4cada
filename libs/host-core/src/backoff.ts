/**
 * How long to wait before each retry of something that failed: every retry
 * loop of the host (the database's listening connection, HTTP plugin
 * deliveries, QQ Bot platform calls, stdio plugin restarts) reads its delays
 * from one of these.
 */
export interface BackoffPolicy {
  /** The wait before the first retry. */
  baseMilliseconds: number;
  /** Each next wait is this many times the one before (default 2). */
  factor?: number;
  /** No wait is longer. */
  maxMilliseconds: number;
  /**
   * The share of each wait (0 to 1) drawn at random and taken off it, so
   * that processes which failed together do not all retry at the same
   * moment (a database coming back gets their connections spread out, not
   * in one burst). 0: exactly the computed wait.
   */
  jitter?: number;
}

/**
 * The wait before retry `attempt` (0 for the first): `base * factor^attempt`,
 * at most `max`, less a random share of up to `jitter` of it; so between
 * `(1 - jitter)` times and exactly the computed wait.
 */
export function backoffDelay(policy: BackoffPolicy, attempt: number, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(0, Math.floor(attempt)), 64);
  const computed = Math.min(policy.maxMilliseconds, policy.baseMilliseconds * (policy.factor ?? 2) ** exponent);
  const jitter = Math.min(1, Math.max(0, policy.jitter ?? 0));
  return Math.round(computed * (1 - jitter * random()));
}
