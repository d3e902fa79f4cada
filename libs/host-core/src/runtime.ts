import type { RuntimeStatusView, SettingsDelivery, StopParamsSchema } from '@host/protocol';

export type { SettingsDelivery };

/**
 * What the plugins API shows about a plugin's process or service: the
 * RuntimeStatusSchema of @host/protocol, where each field is described.
 */
export type RuntimeStatus = RuntimeStatusView;

/** Why a plugin is stopped: the `reason` of `plugin.stop`, as the protocol defines it. */
export type StopReason = ReturnType<typeof StopParamsSchema.parse>['reason'];

/**
 * Starts and stops installed stdio plugins. The installer uses it for the
 * confirmed update flow (stop, replace, start again) and `startAfterInstall`;
 * the admin API for start, stop and restart.
 */
export interface PluginRuntime {
  start(pluginId: string): Promise<RuntimeStatus>;
  /** Idempotent; an operator's stop never triggers a restart. */
  stop(pluginId: string, reason?: StopReason): Promise<RuntimeStatus>;
  restart(pluginId: string): Promise<RuntimeStatus>;
  status(pluginId: string): RuntimeStatus | undefined;
  isRunning(pluginId: string): boolean;
  /**
   * Gives a running plugin its current settings (settings.changed) after an
   * operator changed them; says whether it took them.
   */
  applySettings?(pluginId: string): Promise<SettingsDelivery>;
  /** Stops every plugin (host shutdown). */
  stopAll(reason: StopReason): Promise<void>;
}

export interface LogLine {
  at: string;
  stream: 'stderr' | 'log' | 'host';
  level: 'trace' | 'debug' | 'info' | 'warn' | 'error';
  message: string;
  /** The structured fields of a `log.write` line. */
  fields?: Record<string, unknown>;
  /** The event whose handler wrote the line (`log.write` with an eventId the host delivered to this plugin). */
  eventId?: string;
}

/** A plugin's log: bounded and rotated; readable through the logs API. */
export interface PluginLogStore {
  append(pluginId: string, line: LogLine): void;
  tail(pluginId: string, lines: number): Promise<LogLine[]>;
  /** The newest `max` lines of `pluginId` that carry `eventId`, oldest first; absent where the store cannot search. */
  linesOfEvent?(pluginId: string, eventId: string, max: number): Promise<LogLine[]>;
  /** Flushes pending writes. */
  flush(): Promise<void>;
}
