import { DEFAULT_BACKLOG_LIMITS } from './connection/request-backlog';
import { DEFAULT_MAX_UNREAD_BYTES } from './connection/framed-writer';
import { DEFAULT_LOG_RATE } from './logs/log-rate-limit';

/**
 * What the host buffers for one stdio plugin process, in both directions, and
 * how fast it may log. Every bound that keeps a misbehaving plugin from
 * growing host memory is here; docs/operator/configuration.md lists them.
 */
export interface RuntimeLimits {
  /** Plugin messages waiting to be handled after which the host stops reading the plugin's stdout. */
  maxQueuedMessages: number;
  /** Queued messages at which the host reads stdout again. */
  resumeReadingAt: number;
  /** Host-to-plugin bytes the plugin has not read after which it is stopped as not reading its stdin. */
  maxUnreadBytes: number;
  /** log.write calls and stderr lines per second, sustained; more are dropped and counted. */
  logLinesPerSecond: number;
  /** Log lines a plugin may write at once before the rate applies. */
  logBurst: number;
  /**
   * Host deaths in a row, each within `crashWindowMilliseconds` of the
   * plugin's start, with the plugin running, after which the host does not
   * start it on boot (see BootGuard). 0 turns the guard off.
   */
  hostDeathsBeforeHoldBack: number;
}

export const DEFAULT_LIMITS: RuntimeLimits = {
  maxQueuedMessages: DEFAULT_BACKLOG_LIMITS.highWaterMark,
  resumeReadingAt: DEFAULT_BACKLOG_LIMITS.lowWaterMark,
  maxUnreadBytes: DEFAULT_MAX_UNREAD_BYTES,
  logLinesPerSecond: DEFAULT_LOG_RATE.linesPerSecond,
  logBurst: DEFAULT_LOG_RATE.burst,
  hostDeathsBeforeHoldBack: 2,
};
