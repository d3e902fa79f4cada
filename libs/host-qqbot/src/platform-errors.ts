import { HostError } from '@host/host-core';
import type { MessageErrorCode } from '@host/protocol';

/**
 * What the host does with a platform error code (the `code` of an OpenAPI
 * error body). Every code is marked with where it comes from:
 * - `documented`: the platform's public OpenAPI error table ("openapi 错误",
 *   docs/develop/api-v2/openapi/error/error.md of the tencent-connect/bot-docs
 *   repository, the source of https://bot.q.qq.com/wiki), with its meaning there;
 * - `observed`: answers the platform gives that the table does not list, known
 *   from its answers as users of its SDKs report them. Kept, but marked, so a
 *   change of the documentation can be checked against this table line by line.
 * The HTTP status rules (401 authentication, 429 rate limit, 500 and 504
 * processing failures, 201 and 202 accepted with an error body) come from the
 * same page.
 */
export interface PlatformCode {
  code: number;
  source: 'documented' | 'observed';
  meaning: string;
}

function codeTable(entries: readonly PlatformCode[]): ReadonlyMap<number, PlatformCode> {
  return new Map(entries.map((e) => [e.code, e]));
}

/** "Too many messages": message.provider.rate_limited, whatever the HTTP status. */
export const RATE_LIMIT_PLATFORM_CODES = codeTable([
  { code: 20028, source: 'documented', meaning: 'ChannelHitWriteRateLimit: channel message rate limit' },
  { code: 304019, source: 'documented', meaning: 'AT_EVERYONE_TIMES: @everyone count used up' },
  { code: 304045, source: 'documented', meaning: 'channel active message count limit' },
  { code: 304049, source: 'documented', meaning: 'direct message active message rate limit' },
  { code: 304050, source: 'documented', meaning: 'direct message active message total limit' },
  { code: 1100100, source: 'documented', meaning: 'security: message rate limited' },
  { code: 1100308, source: 'documented', meaning: 'channel rate limit hit' },
]);

/** The access token was refused: the host fetches a new token once and repeats the call. */
export const TOKEN_PLATFORM_CODES = codeTable([
  { code: 11241, source: 'documented', meaning: 'ErrorWrongToken: no token in the request' },
  { code: 11243, source: 'documented', meaning: 'ErrorCheckTokenNotPass: the token is wrong' },
  { code: 11244, source: 'observed', meaning: '"token not exist or expire": the token expired' },
]);

/**
 * A check of the platform failed before the message was handled ("system
 * error, one retry usually works, retry at most once"): the call is repeated
 * once, also for an active message, which these codes say was not posted.
 */
export const RETRY_ONCE_PLATFORM_CODES = codeTable([
  { code: 11242, source: 'documented', meaning: 'ErrorCheckTokenFailed: the token check failed (system error)' },
  { code: 11252, source: 'documented', meaning: 'ErrorCheckAppPrivilegeFailed: the privilege check failed (system error)' },
  { code: 11263, source: 'documented', meaning: 'ErrorCheckGuildAuth: the guild permission check failed (system error)' },
  { code: 11281, source: 'documented', meaning: 'ErrorCheckAdminFailed: the administrator check failed (system error)' },
]);

/** The bot account itself is refused (wrong app id, no permission, banned): message.provider.auth_failed, for the operator to fix. */
export const ACCOUNT_PLATFORM_CODES = codeTable([
  { code: 10001, source: 'documented', meaning: 'UnknownAccount: account problem' },
  { code: 11251, source: 'documented', meaning: 'ErrorWrongAppid: the app id of the token is not recognised' },
  { code: 11253, source: 'documented', meaning: 'ErrorCheckAppPrivilegeNotPass: the bot may not call this API; apply on the platform' },
  { code: 11254, source: 'documented', meaning: 'ErrorInterfaceForbidden: this API is blocked for the bot' },
  { code: 11261, source: 'documented', meaning: 'ErrorWrongAppid: no app id' },
  { code: 11265, source: 'documented', meaning: 'ErrorRobotHasBaned: the bot is banned' },
  { code: 11275, source: 'documented', meaning: 'ErrorWrongAppid: no app id' },
]);

/*
 * The codes of the group and C2C message API below are listed on the
 * platform's API reference pages (bot.q.qq.com/wiki/develop/api-v2/autogen/api/
 * v2_groups_group_openid_messages.post.html and v2_users_user_openid_messages.post.html),
 * which are not in the tencent-connect/bot-docs repository: `observed`, with the
 * answers users of its SDKs report (body `{"message", "code", "err_code", "trace_id"}`).
 */

/** The message being answered is too old for the platform: message.reference.expired, as when the host's own window check refuses it. */
export const REPLY_EXPIRED_PLATFORM_CODES = codeTable([
  { code: 304027, source: 'documented', meaning: 'MSG_EXPIRE: the replied message expired' },
  { code: 304103, source: 'observed', meaning: '"消息ID已过期": the message id expired' },
  { code: 40034005, source: 'observed', meaning: '"回复消息msg_id已过期": the reply window of msg_id is over' },
  { code: 40034026, source: 'observed', meaning: '"请求参数event_id已过期": the event_id expired' },
]);

/**
 * The platform will not link the reply to that message at all: message.reference.refused
 * (40034024 as AstrBotDevs/AstrBot issue #6931 shows it: 400, "请求参数msg_id无效或越权").
 */
export const REPLY_REFUSED_PLATFORM_CODES = codeTable([
  { code: 40034024, source: 'observed', meaning: '"请求参数msg_id无效或越权": msg_id invalid or out of scope' },
  { code: 40034025, source: 'observed', meaning: '"请求参数event_id无效": event_id invalid' },
  { code: 40034027, source: 'observed', meaning: '"该事件不支持回复消息": the event takes no reply' },
]);

/**
 * The platform could not fetch or convert the file at the URL of an upload (send.md of
 * tencent-connect/bot-docs, error codes of the group and C2C send APIs): message.media.upload_failed.
 */
export const MEDIA_FAILED_PLATFORM_CODES = codeTable([
  { code: 304082, source: 'documented', meaning: '"upload media info fail" (send.md): fetching the media failed, retry' },
  { code: 304083, source: 'documented', meaning: '"convert media info fail" (send.md): converting the media failed, retry' },
]);

/**
 * The replies one received message may have are used up (5 per message, send.md of
 * tencent-connect/bot-docs): message.reference.reply_limit, not a rate limit to wait out.
 */
export const REPLY_LIMIT_PLATFORM_CODES = codeTable([
  { code: 22009, source: 'documented', meaning: '"msg limit exceed" (send.md, groups and C2C): the replies of the message are used up' },
  { code: 40034128, source: 'observed', meaning: '"被动回复时间或次数超限": passive reply time or count exceeded' },
]);

/**
 * Active messages to groups and C2C ended on 2025-04-21 (send.md): message.provider.active_unavailable
 * (40034102 as tencent-connect/openclaw-qqbot issue #43 shows it: 400, "主动消息失败, 无权限").
 */
export const ACTIVE_UNAVAILABLE_PLATFORM_CODES = codeTable([
  { code: 40034102, source: 'observed', meaning: '"主动消息失败, 无权限": active message, no permission' },
  { code: 40034105, source: 'observed', meaning: '"主动消息失败, 无权限": active message, no permission' },
]);

/**
 * "消息被去重，请检查请求msgseq" (langbot-app/LangBot issue #2290: 400, code 40054005): this
 * msg_id + msg_seq was taken before. After an attempt that may have arrived (a timeout, a
 * lost connection, a server error) it means the earlier attempt was delivered.
 */
export const DUPLICATE_PLATFORM_CODES = codeTable([
  { code: 40054005, source: 'observed', meaning: '"消息被去重，请检查请求msgseq": this msg_id + msg_seq was sent before' },
]);

/**
 * Markdown refused for this bot (tencent-connect/openclaw-qqbot issue #57: "不允许发送原生 markdown",
 * code 40034012): the provider sends the same parts again as text.
 */
export const MARKDOWN_REFUSED_PLATFORM_CODES = codeTable([
  { code: 40034012, source: 'observed', meaning: '"不允许发送原生 markdown": the bot may not send Markdown' },
]);

/**
 * Codes of a 201 or 202 answer: the platform took the message and holds it for
 * review. The send is accepted (the message may show later), without a message id.
 */
export const ACCEPTED_FOR_REVIEW_PLATFORM_CODES = codeTable([
  { code: 304023, source: 'documented', meaning: 'PUSH_MSG_ASYNC_OK: active message accepted, waiting for review' },
  { code: 304024, source: 'documented', meaning: 'REPLY_MSG_ASYNC_OK: reply accepted, waiting for review' },
]);

/** What an OpenAPI error body says: `{code, message, err_code?, trace_id?}`. */
export interface PlatformErrorBody {
  code?: number;
  message?: string;
  traceId?: string;
}

export function parsePlatformError(text: string): PlatformErrorBody {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    if (!body || typeof body !== 'object') return {};
    const code = typeof body['code'] === 'number' ? body['code'] : typeof body['err_code'] === 'number' ? body['err_code'] : undefined;
    return {
      ...(code !== undefined ? { code } : {}),
      ...(typeof body['message'] === 'string' ? { message: body['message'].slice(0, 500) } : {}),
      ...(typeof body['trace_id'] === 'string' ? { traceId: body['trace_id'].slice(0, 100) } : {}),
    };
  } catch {
    return {};
  }
}

/**
 * The error a plugin gets for a platform failure: a stable `message.provider.*`
 * code, with the platform's own status, code, message and trace id in
 * `details` so nothing the platform said is lost.
 */
export function platformFailure(
  code: Extract<MessageErrorCode, `message.provider.${string}` | `message.reference.${string}`>,
  what: string,
  status: number | null,
  platform: PlatformErrorBody,
  extra: Record<string, unknown> = {},
): HostError {
  const said = [
    status !== null ? `HTTP ${status}` : null,
    platform.code !== undefined ? `code ${platform.code}` : null,
    platform.message ? JSON.stringify(platform.message) : null,
  ].filter(Boolean);
  return new HostError(code, `${what}${said.length ? ` (${said.join(', ')})` : ''}`, {
    provider: 'qqbot',
    httpStatus: status,
    providerCode: platform.code ?? null,
    providerMessage: platform.message ?? null,
    ...(platform.traceId ? { traceId: platform.traceId } : {}),
    ...extra,
  });
}
