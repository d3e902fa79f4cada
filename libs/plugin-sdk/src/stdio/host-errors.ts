import { MESSAGE_ERRORS, RpcErrorCode, type MessageErrorCode, type Target } from '@host/protocol';
import { HostCallError, PluginMessageError } from '../errors';

function isMessageCode(code: unknown): code is MessageErrorCode {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(MESSAGE_ERRORS, code);
}

/**
 * Turns a failed plugin-to-host call into what the plugin author can act on:
 * a refused message (MessageRejected with a `message.*` code in data.code, or
 * PermissionDenied) becomes PluginMessageError with `fromHost: true`; anything
 * else stays as it is.
 */
export function hostFailure(error: unknown, target: Target | undefined): unknown {
  if (!(error instanceof HostCallError)) return error;
  const dataCode = (error.data as { code?: unknown } | undefined)?.code;
  if (error.code === RpcErrorCode.MessageRejected && isMessageCode(dataCode)) {
    return new PluginMessageError(dataCode, error.message, { fromHost: true, ...(target ? { target } : {}) });
  }
  if (error.code === RpcErrorCode.PermissionDenied) {
    return new PluginMessageError('message.permission.denied', error.message, { fromHost: true, ...(target ? { target } : {}) });
  }
  return error;
}
