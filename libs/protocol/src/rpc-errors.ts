/**
 * Numeric JSON-RPC error codes: what crosses the stdio pipe. Host-defined
 * codes sit in the implementation range -32000..-32099. When the host refuses
 * a message for a reason that has a stable string code (for example
 * `message.format.unsupported_target`), that code is in `error.data.code`.
 */
export const RpcErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** The plugin failed to handle a request (plugin side). */
  PluginError: -32000,
  /** The calling plugin did not declare the permission the method needs. */
  PermissionDenied: -32001,
  /** `params.token` is missing or is not this process's runtime token. */
  Unauthorized: -32002,
  /** A request other than host.initialize arrived before the handshake. */
  NotInitialized: -32003,
  /** host.initialize arrived a second time. */
  AlreadyInitialized: -32004,
  /** The host refused the message; `data.code` is a message.* code. */
  MessageRejected: -32005,
  /** Every handler of the plugin is busy (maxConcurrentEvents running, or its start-up queue full). */
  Overloaded: -32006,
  /** The plugin is stopping and takes no new events. */
  Stopping: -32007,
  /** The request did not finish within the request timeout. */
  RequestTimeout: -32008,
  /** The event was cancelled (events.cancel) before its handler started. */
  Cancelled: -32009,
} as const;

export type RpcErrorName = keyof typeof RpcErrorCode;

/** What each numeric code means and what the caller should do. */
export const RPC_ERROR_HELP: Record<RpcErrorName, string> = {
  ParseError: 'The frame payload is not valid JSON. Write exactly one JSON object per frame, UTF-8 encoded.',
  InvalidRequest: 'The object is not a valid JSON-RPC 2.0 request. Send {"jsonrpc":"2.0","id":...,"method":...}.',
  MethodNotFound: 'No such method in protocol v2. Check the method name against docs/protocol/v2.md.',
  InvalidParams: 'The params do not match the method schema; error.data.issues lists each field and the fix.',
  InternalError: 'An unexpected error inside the receiver. See its log; report it if it repeats.',
  PluginError: 'The plugin failed while handling the request; see error.message and the plugin log.',
  PermissionDenied: 'Declare the permission named in error.data.permission in manifest.json and reinstall.',
  Unauthorized: 'Put the token from host.initialize into params.token; it is only valid for this process.',
  NotInitialized: 'Wait for host.initialize and answer it before sending or expecting anything else.',
  AlreadyInitialized: 'host.initialize is sent once per process; a second one is refused.',
  MessageRejected: 'The host refused the message; error.data.code says why (see the message.* codes).',
  Overloaded:
    'Every event handler of the plugin is busy; finish handlers sooner or raise concurrency.maxConcurrentEvents in manifest.json.',
  Stopping: 'The plugin is stopping and takes no new events.',
  RequestTimeout: 'The request took longer than requestTimeoutMilliseconds; ACK with the decision first and do slow work after it.',
  Cancelled: 'The host cancelled this event (events.cancel) before its handler started; nothing more is expected for it.',
};
