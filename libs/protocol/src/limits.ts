/**
 * Numeric limits of protocol v2. Every limit a plugin or the host can hit is
 * named here once; the spec (docs/protocol/v2.md, section "Limits") quotes
 * these values and a test keeps the two in step.
 */
export const PROTOCOL_VERSION = 2 as const;

export const LIMITS = {
  /** Longest header block of one stdio frame, in bytes, including the blank line. */
  maxHeaderBytes: 8192,
  /** Largest JSON payload of one stdio frame, in bytes. */
  maxPayloadBytes: 4 * 1024 * 1024,
  /**
   * Deepest nesting of arrays and objects in a JSON document the host or an SDK reads: a stdio frame, an HTTP
   * plugin's answer or manifest, a manifest.json, an admin API body.
   */
  maxJsonDepth: 64,
  /** Deepest nesting of an incoming chat event (a QQ Bot webhook body, a console message); below maxJsonDepth, so the event fits in a frame. */
  maxEventJsonDepth: 32,
  /** Most members of one JSON object or elements of one JSON array, in every document maxJsonDepth applies to. */
  maxJsonEntries: 10_000,
  /** Longest log line kept from stderr or `log.write`, in characters. */
  maxLogLineChars: 4096,
  /** Most parts in one outgoing message after normalisation. */
  maxMessageParts: 100,
  /** Longest rendered message body text, in characters. */
  maxMessageChars: 4000,
  /** Most image or file parts in one outgoing message (a provider sends one file per message). */
  maxMediaParts: 1,
  /** Longest URL of an image or file part, or of a link button. */
  maxMediaUrlChars: 2048,
  /** Most rows of buttons under one message (QQ Bot's limit, msg-btn.md of tencent-connect/bot-docs). */
  maxKeyboardRows: 5,
  /** Most buttons in one keyboard row (QQ Bot's limit, same page). */
  maxKeyboardButtonsPerRow: 5,
  /** Longest button label, in characters. */
  maxButtonLabelChars: 40,
  /** Longest callback data or command text of a button, in characters. */
  maxButtonDataChars: 512,
  /**
   * Media uploads one plugin may make per minute: image and file parts the host fetches for a provider, and,
   * counted apart by the same rule, uploads of bytes with `media.upload`.
   */
  maxMediaUploadsPerMinute: 20,
  /** Largest file one `media.upload` may carry, in bytes (its declared `size`). */
  maxMediaUploadBytes: 10 * 1024 * 1024,
  /**
   * Most bytes in one `media.chunk`, decoded (base64 makes its `data` a third longer): well under
   * maxPayloadBytes, so a chunk never needs a large frame.
   */
  maxMediaChunkBytes: 512 * 1024,
  /** Most bytes the host keeps of uploaded media (finished and under way) for all plugins together. */
  maxMediaStoreBytes: 256 * 1024 * 1024,
  /** How long a media id from `media.finish` stays usable in image and file parts. */
  mediaTtlMilliseconds: 60 * 60_000,
  /** How long an upload may wait for its next `media.chunk` or `media.finish` before the host drops it. */
  mediaUploadIdleMilliseconds: 60_000,
  /** Most users one multi-user mention helper accepts. */
  maxMentionUsers: 20,
  /** Most outbound messages in one HTTP plugin response. */
  maxOutboundMessages: 20,
  /** Largest HTTP plugin response body, in bytes. */
  maxHttpResponseBytes: 1024 * 1024,
  /** Largest manifest fetched from an HTTP plugin, in bytes. */
  maxHttpManifestBytes: 256 * 1024,
  /** Largest `manifest.json` inside a package, in bytes. */
  maxManifestBytes: 256 * 1024,
  /** Longest `pluginId`. */
  maxPluginIdLength: 100,
  /** Highest command priority. */
  maxPriority: 1_000_000,
  /** Shortest handler deadline a manifest may set (`concurrency.handlerDeadlineMilliseconds`). */
  minHandlerDeadlineMilliseconds: 1_000,
  /** Longest handler deadline a manifest may set. */
  maxHandlerDeadlineMilliseconds: 60 * 60_000,
  /**
   * Longest an event waits for a plugin to take it, however long its reply
   * window: also the wait of an event without one, and the most a manifest's
   * `concurrency.maxWaitMilliseconds` may set.
   */
  maxEventWaitMilliseconds: 60 * 60_000,
  /** Largest `concurrency.queueCapacity` a manifest may set. */
  maxQueueCapacity: 10_000,
} as const;

/** Defaults the host applies when a manifest does not set `concurrency`. */
export const RUNTIME_DEFAULTS = {
  /**
   * Event handlers one plugin runs at the same time (manifest `concurrency.maxConcurrentEvents`).
   * Chat-bot handlers mostly wait on I/O (a model, a web API, the platform's reply): see the spec's
   * "Concurrency defaults" for the measurements behind 32.
   */
  maxConcurrentEvents: 32,
  /**
   * Events kept for a plugin that is not running yet (starting, restarting) beyond which its
   * deliveries fail at once (overflow policy "reject"), or waiting events beyond which the oldest is
   * dropped ("dropOldest") (manifest `concurrency.queueCapacity`). A running plugin's waiting events
   * are bounded by time: they expire with their reply window.
   */
  queueCapacity: 1_000,
  /** Deadline of every JSON-RPC request in either direction, including the ACK (the decision) of `events.message`. */
  requestTimeoutMilliseconds: 30_000,
  /** How long one event handler may run, from `events.message` until `events.completed` (manifest `concurrency.handlerDeadlineMilliseconds`). */
  handlerDeadlineMilliseconds: 5 * 60_000,
  /** Deadline for the answer to `host.initialize`, counted from process start. */
  initializeTimeoutMilliseconds: 10_000,
  /** How long a plugin may take to exit after `plugin.stop` before SIGTERM. */
  stopGraceMilliseconds: 5_000,
  /** Interval of `plugin.ping` while a stdio plugin runs. */
  pingIntervalMilliseconds: 15_000,
  /** Deadline of one `plugin.ping`; two missed pings in a row mean the plugin hangs. */
  pingTimeoutMilliseconds: 5_000,
} as const;

/** Defaults of the HTTP transport. */
export const HTTP_DEFAULTS = {
  /** Deadline of one whole HTTP exchange (connect, send, read the answer); per plugin configurable. */
  requestTimeoutMilliseconds: 10_000,
  /** Deadline for the TCP and TLS connection to an HTTP plugin. */
  connectTimeoutMilliseconds: 3_000,
  /** Retries of one delivery after a connection failure or a 502, 503 or 504 answer. */
  maxRetries: 2,
  /** Largest difference between `x-host-timestamp` and the plugin's clock; also the replay window. */
  signatureToleranceSeconds: 300,
} as const;

/**
 * A size for people to read, in the binary units the limits are set in: "64 MiB" for a whole number of a unit,
 * "1.5 MiB" (one decimal) otherwise, "512 bytes" below a KiB. The one way the host, its installer and the CLI
 * write sizes.
 */
export function formatBytes(n: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (n >= size) {
      const value = n / size;
      return `${Number.isInteger(value) ? value : value.toFixed(1)} ${unit}`;
    }
  }
  return n === 1 ? '1 byte' : `${n} bytes`;
}
