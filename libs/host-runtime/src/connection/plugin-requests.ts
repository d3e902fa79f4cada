import { timingSafeEqual } from 'node:crypto';
import type { LogLine, MediaStore, OutboundSink, PluginLogStore } from '@host/host-core';
import { findMethod, Methods, RpcErrorCode, toValidationIssues, type Permission, type PluginError } from '@host/protocol';
import { ResponseError } from 'vscode-jsonrpc/node';
import type { LogRateLimiter } from '../logs/log-rate-limit';
import { parseParams } from './params-validator';

/** What the handlers of one process need to know about their plugin. */
export interface PluginRequestContext {
  pluginId: string;
  token: string;
  permissions: readonly Permission[];
  logs: PluginLogStore;
  /** log.write calls over the rate are answered but not logged (the limiter counts them). */
  logRate?: LogRateLimiter;
  /** Whether this process was handed `eventId`: only then does a log.write line keep it (docs/protocol/v2.md 4.5). */
  deliveredHere?: (eventId: string) => boolean;
  sink: OutboundSink;
  /** Keeps the bytes of media.upload, media.chunk and media.finish; without it those calls are refused as unavailable. */
  media?: MediaStore;
  /** events.completed: settles the event's delivery; false when the host no longer waits for it. */
  onCompleted: (eventId: string, error: PluginError | null, durationMs: number | undefined) => boolean;
}

const PLUGIN_METHODS = [
  Methods.log,
  Methods.completed,
  Methods.reply,
  Methods.send,
  Methods.mediaUpload,
  Methods.mediaChunk,
  Methods.mediaFinish,
]
  .map((m) => m.method)
  .join(', ');

function tokenMatches(expected: Buffer, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const g = Buffer.from(given, 'utf8');
  // timingSafeEqual needs equal lengths; comparing against itself keeps the time flat.
  return g.length === expected.length ? timingSafeEqual(g, expected) : (timingSafeEqual(expected, expected), false);
}

interface SinkFailure {
  code?: unknown;
  message?: unknown;
  details?: unknown;
}

/**
 * Handles one plugin-to-host request. The checks run in a fixed order, so a
 * caller without the token learns nothing else: method known, token valid,
 * params valid, permission declared; then the call itself.
 */
export function createPluginRequestHandler(ctx: PluginRequestContext) {
  const expected = Buffer.from(ctx.token, 'utf8');
  return async (method: string, params: unknown): Promise<unknown> => {
    const descriptor = findMethod(method);
    if (!descriptor || descriptor.direction !== 'pluginToHost') {
      return new ResponseError(
        RpcErrorCode.MethodNotFound,
        `"${method}" is not a plugin-to-host method of protocol v2; plugins may call ${PLUGIN_METHODS}`,
      );
    }
    const token = typeof params === 'object' && params !== null ? (params as { token?: unknown }).token : undefined;
    if (!tokenMatches(expected, token)) {
      return new ResponseError(
        RpcErrorCode.Unauthorized,
        'params.token is missing or is not the runtime token of this process; use the token from host.initialize',
      );
    }
    const parsed = parseParams(descriptor, params);
    if (!parsed.success) {
      const issues = toValidationIssues(parsed.error, 'params');
      return new ResponseError(RpcErrorCode.InvalidParams, `invalid params for ${method}: ${issues.map((i) => i.message).join(' ')}`, {
        issues,
      });
    }
    // messages.reply and messages.send are checked by the outbound sink, which records the refusal in the event log.
    const checkedBySink = method === Methods.reply.method || method === Methods.send.method;
    if (descriptor.permission && !checkedBySink && !ctx.permissions.includes(descriptor.permission)) {
      return new ResponseError(
        RpcErrorCode.PermissionDenied,
        `${method} needs the permission "${descriptor.permission}"; declare it in manifest.json permissions and reinstall`,
        { code: 'message.permission.denied', permission: descriptor.permission },
      );
    }
    const p = parsed.data as Record<string, unknown>;
    try {
      switch (method) {
        case Methods.log.method: {
          if (ctx.logRate && !ctx.logRate.take()) return { accepted: true };
          const fields = p['fields'] as LogLine['fields'];
          // Another plugin's event, a made-up id or one this process was never handed is dropped, never refused.
          const eventId = p['eventId'] as string | undefined;
          const own = eventId !== undefined && ctx.deliveredHere?.(eventId) === true;
          ctx.logs.append(ctx.pluginId, {
            at: new Date().toISOString(),
            stream: 'log',
            level: p['level'] as LogLine['level'],
            message: p['message'] as string,
            ...(fields && Object.keys(fields).length > 0 ? { fields } : {}),
            ...(own ? { eventId } : {}),
          });
          return { accepted: true };
        }
        case Methods.completed.method:
          return {
            recorded: ctx.onCompleted(
              p['eventId'] as string,
              (p['error'] as PluginError | null) ?? null,
              p['durationMs'] as number | undefined,
            ),
          };
        case Methods.mediaUpload.method:
        case Methods.mediaChunk.method:
        case Methods.mediaFinish.method:
          return await mediaCall(ctx, method, p);
        case Methods.reply.method:
          return await ctx.sink.send({
            pluginId: ctx.pluginId,
            kind: 'reply',
            eventId: p['eventId'] as string,
            message: p['message'] as never,
          });
        default:
          // eventId (the handler's event) is checked by the sink against this plugin's own deliveries.
          return await ctx.sink.send({
            pluginId: ctx.pluginId,
            kind: 'send',
            ...(p['eventId'] !== undefined ? { eventId: p['eventId'] as string } : {}),
            target: p['target'] as never,
            message: p['message'] as never,
          });
      }
    } catch (e) {
      return sinkError(e as SinkFailure);
    }
  };
}

/** media.upload, media.chunk and media.finish (docs/protocol/v2.md 4.12), each against the plugin's own uploads. */
async function mediaCall(ctx: PluginRequestContext, method: string, p: Record<string, unknown>): Promise<unknown> {
  if (!ctx.media) return new ResponseError(RpcErrorCode.InternalError, `${method} is not available: this host keeps no uploaded media`);
  if (method === Methods.mediaUpload.method) {
    return ctx.media.begin({
      pluginId: ctx.pluginId,
      contentType: p['contentType'] as string,
      size: p['size'] as number,
      ...(p['fileName'] !== undefined ? { fileName: p['fileName'] as string } : {}),
    });
  }
  if (method === Methods.mediaChunk.method) {
    return ctx.media.append(ctx.pluginId, p['uploadId'] as string, p['offset'] as number, p['data'] as string);
  }
  const media = await ctx.media.finish(ctx.pluginId, p['uploadId'] as string);
  return { mediaId: media.mediaId, contentType: media.contentType, size: media.size, expiresAt: new Date(media.expiresAt).toISOString() };
}

/** Maps a refusal of the outbound sink to the documented JSON-RPC error. */
function sinkError(e: SinkFailure): ResponseError<unknown> {
  const code = typeof e.code === 'string' ? e.code : undefined;
  const message = typeof e.message === 'string' ? e.message : 'the message was refused';
  if (code === 'message.permission.denied') {
    const permission = (e.details as { permission?: string } | undefined)?.permission;
    return new ResponseError(RpcErrorCode.PermissionDenied, message, { code, permission });
  }
  if (code?.startsWith('message.')) {
    // A provider's refusal keeps what the provider said (message.provider.*: providerCode, httpStatus, ...).
    const details = e.details && typeof e.details === 'object' && !Array.isArray(e.details) ? e.details : {};
    return new ResponseError(RpcErrorCode.MessageRejected, message, { ...details, code });
  }
  return new ResponseError(RpcErrorCode.InternalError, `the host could not send the message: ${message}`);
}
