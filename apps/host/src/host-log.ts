/** A level of the host's own log lines. */
export type LogLevel = 'info' | 'warn' | 'error';

/** What a line is about, for machines: the part of the host that wrote it, and the plugin and event it concerns. */
export interface LogFields {
  component?: string;
  pluginId?: string;
  eventId?: string;
}

/** How the host writes its own log lines; every part of it gets this function (or one bound to a component). */
export type HostLog = (level: LogLevel, message: string, fields?: LogFields) => void;

/** HOST_LOG_FORMAT: lines for people, or one JSON object a line for log collectors. */
export type LogFormat = 'text' | 'json';

/**
 * One log line in `format`. Text is what an operator reads (time, level, message). JSON has the same
 * fields on every line, in this order, absent ones null: time, level, component (default "host"),
 * pluginId, eventId, message.
 */
export function formatLogLine(format: LogFormat, at: Date, level: LogLevel, message: string, fields: LogFields = {}): string {
  if (format === 'text') return `${at.toISOString()} ${level.padEnd(5)} ${message}`;
  return JSON.stringify({
    time: at.toISOString(),
    level,
    component: fields.component ?? 'host',
    pluginId: fields.pluginId ?? null,
    eventId: fields.eventId ?? null,
    message,
  });
}

/** The host's log: info to stdout, warnings and errors to stderr, each one line in `format`. */
export function createHostLog(format: LogFormat): HostLog {
  return (level, message, fields) => {
    const line = formatLogLine(format, new Date(), level, message, fields);
    if (level === 'info') console.log(line);
    else console.error(line);
  };
}

/** `log` with every line marked as written by `component`. */
export function componentLog(log: HostLog, component: string): HostLog {
  return (level, message, fields) => log(level, message, { component, ...fields });
}
