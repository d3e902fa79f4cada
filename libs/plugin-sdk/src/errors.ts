import {
  MESSAGE_ERRORS,
  RPC_ERROR_HELP,
  RpcErrorCode,
  SDK_SHARED_ERRORS,
  type MessageErrorCode,
  type RpcErrorName,
  type SdkSharedErrorCode,
  type Target,
  type ValidationIssue,
} from '@host/protocol';

/**
 * A message was refused: by the SDK's own checks before sending (the same
 * rules the host applies) or by the host. `code` is a stable `message.*` code
 * of the protocol's error catalogue; the message says what is wrong and the fix.
 *
 * @example
 * ```ts
 * import { definePlugin, PluginMessageError } from '@host/plugin-sdk-v2';
 *
 * export default definePlugin({
 *   pluginId: 'com.example.safe',
 *   async onMessage(ctx) {
 *     try {
 *       await ctx.replyMarkdown('**hi** ', ctx.at.user(ctx.sender));
 *     } catch (error) {
 *       // Markdown goes only to groups: fall back to text in a direct chat.
 *       if (error instanceof PluginMessageError && error.code === 'message.format.unsupported_target') {
 *         await ctx.reply('hi');
 *       } else throw error;
 *     }
 *   },
 * });
 * ```
 */
export class PluginMessageError extends Error {
  override readonly name = 'PluginMessageError';
  /** Stable code from the protocol's error catalogue, e.g. `message.format.unsupported_target`. */
  readonly code: MessageErrorCode;
  /** Where the message was going, when known. */
  readonly target: Target | undefined;
  /** True when the host refused it, false when the SDK's checks did. */
  readonly fromHost: boolean;

  constructor(code: MessageErrorCode, message?: string, options: { target?: Target; fromHost?: boolean } = {}) {
    super(message ?? MESSAGE_ERRORS[code].message);
    this.code = code;
    this.target = options.target;
    this.fromHost = options.fromHost ?? false;
  }
}

/**
 * Local error codes of the SDK: mistakes in how a plugin uses the SDK or
 * conditions of its own process. They never cross the wire. They are the
 * protocol's SDK catalogue (SDK_SHARED_ERRORS, the same codes in every
 * language's SDK), in the one entry format of every error family
 * (`{message}`); docs/sdk/node.md lists each with its fix in Node.js terms.
 */
export const SDK_ERRORS = SDK_SHARED_ERRORS;

/** A code of SDK_ERRORS. */
export type SdkErrorCode = SdkSharedErrorCode;

/**
 * A local SDK error with a stable `SDK_*` code (see SDK_ERRORS).
 *
 * @example
 * ```ts
 * import { PluginSdkError, definePlugin } from '@host/plugin-sdk-v2';
 *
 * try {
 *   definePlugin({ pluginId: 'Not A Valid Id' });
 * } catch (error) {
 *   if (error instanceof PluginSdkError) console.error(error.code, error.message);
 * }
 * ```
 */
export class PluginSdkError extends Error {
  override readonly name = 'PluginSdkError';
  readonly code: SdkErrorCode;
  /** For SDK_MANIFEST_INVALID: every problem as `{code, path, message}` (codes are `manifest.*`). */
  readonly issues: readonly ValidationIssue[];

  constructor(code: SdkErrorCode, detail?: string, issues: readonly ValidationIssue[] = []) {
    super(detail ? `${detail} (${code}: ${SDK_ERRORS[code].message})` : `${code}: ${SDK_ERRORS[code].message}`);
    this.code = code;
    this.issues = issues;
  }
}

/**
 * A request the plugin made to the host (log.write, messages.reply,
 * messages.send) failed with a JSON-RPC error, or timed out
 * (`code === RpcErrorCode.RequestTimeout`). Refused messages are
 * PluginMessageError instead.
 *
 * @example
 * ```ts
 * import { HostCallError, RpcErrorCode, definePlugin } from '@host/plugin-sdk-v2';
 *
 * export default definePlugin({
 *   pluginId: 'com.example.patient',
 *   async onMessage(ctx) {
 *     try {
 *       await ctx.reply('working on it');
 *     } catch (error) {
 *       if (error instanceof HostCallError && error.code === RpcErrorCode.RequestTimeout) ctx.log.warn('the host did not answer in time');
 *       else throw error;
 *     }
 *   },
 * });
 * ```
 */
export class HostCallError extends Error {
  override readonly name = 'HostCallError';
  /** The JSON-RPC method that failed. */
  readonly method: string;
  /** Numeric JSON-RPC error code (see RpcErrorCode). */
  readonly code: number;
  /** `error.data` of the response, when the host sent one. */
  readonly data: unknown;

  constructor(method: string, code: number, message: string, data?: unknown) {
    const name = (Object.keys(RpcErrorCode) as RpcErrorName[]).find((k) => RpcErrorCode[k] === code);
    super(`${method} failed: ${message}${name ? ` (${code} ${name}: ${RPC_ERROR_HELP[name]})` : ` (${code})`}`);
    this.method = method;
    this.code = code;
    this.data = data;
  }
}

/**
 * Throw it from a handler to report a failure with your own stable code. The
 * host records `{code, message, details}` as the event's error (in
 * `events.completed` on stdio, in `error` of the HTTP response). Any other
 * thrown error is reported with code `plugin.handler_failed`.
 *
 * @example
 * ```ts
 * import { HandlerError, definePlugin } from '@host/plugin-sdk-v2';
 *
 * export default definePlugin({
 *   pluginId: 'com.example.weather',
 *   commands: {
 *     async weather(ctx) {
 *       if (!ctx.args) throw new HandlerError('weather.city_missing', 'Usage: /weather <city>');
 *       await ctx.reply(`Sunny in ${ctx.args}`);
 *     },
 *   },
 * });
 * ```
 */
export class HandlerError extends Error {
  override readonly name = 'HandlerError';
  readonly code: string;
  readonly details: unknown;

  constructor(code: string, message: string, details?: unknown) {
    super(message);
    this.code = code;
    this.details = details;
  }
}
