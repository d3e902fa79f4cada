import { backoffDelay } from '@host/host-core';
import { RUNTIME_DEFAULTS } from '@host/protocol';

/**
 * Every delay of the runtime in one place, so tests can run real processes
 * with short timings. Production uses the protocol defaults.
 */
export interface RuntimeTimings {
  /** Deadline for the answer to host.initialize. */
  initializeTimeoutMilliseconds: number;
  /** How long a stopping plugin may take to answer plugin.stop and exit. */
  stopGraceMilliseconds: number;
  /** Between SIGTERM and SIGKILL of the process group. */
  killAfterMilliseconds: number;
  /** Interval of plugin.ping while running; 0 disables liveness checks. */
  pingIntervalMilliseconds: number;
  pingTimeoutMilliseconds: number;
  /** Consecutive unanswered pings after which the plugin counts as hung. */
  missedPingsBeforeHung: number;
  /** First restart delay after a crash; doubles per crash in the window. */
  restartBaseDelayMilliseconds: number;
  restartMaxDelayMilliseconds: number;
  /** Crashes within `crashWindowMilliseconds` after which the plugin is `failed`. */
  crashBudget: number;
  crashWindowMilliseconds: number;
}

export const DEFAULT_TIMINGS: RuntimeTimings = {
  initializeTimeoutMilliseconds: RUNTIME_DEFAULTS.initializeTimeoutMilliseconds,
  stopGraceMilliseconds: RUNTIME_DEFAULTS.stopGraceMilliseconds,
  killAfterMilliseconds: 2_000,
  pingIntervalMilliseconds: RUNTIME_DEFAULTS.pingIntervalMilliseconds,
  pingTimeoutMilliseconds: RUNTIME_DEFAULTS.pingTimeoutMilliseconds,
  missedPingsBeforeHung: 2,
  restartBaseDelayMilliseconds: 1_000,
  restartMaxDelayMilliseconds: 60_000,
  crashBudget: 5,
  crashWindowMilliseconds: 10 * 60_000,
};

/**
 * Restart delay after the `crashesInWindow`-th crash: 1 s, 2 s, 4 s, ... capped.
 * Without jitter: one process restarts, nothing is spread out by it, and the
 * admin app shows the exact time of the next restart.
 */
export function restartDelay(t: RuntimeTimings, crashesInWindow: number): number {
  return backoffDelay(
    { baseMilliseconds: t.restartBaseDelayMilliseconds, maxMilliseconds: t.restartMaxDelayMilliseconds },
    crashesInWindow - 1,
  );
}

/** "10 s", "500 ms": for messages a user reads. */
export function formatDuration(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms >= 1000) return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
  return `${ms} ms`;
}
