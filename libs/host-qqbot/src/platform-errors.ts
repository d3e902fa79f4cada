import { HostError } from '@host/host-core';
import type { MessageErrorCode } from '@host/protocol';

/**
 * Platform error codes (the `code` of an OpenAPI error body) that mean "too
 * many messages": the QQ Bot platform answers some rate limits with HTTP 429
 * and others with a 4xx and one of these codes. Kept in one table so a code
 * the platform adds is one line.
 */
export const RATE_LIMIT_PLATFORM_CODES: ReadonlySet<number> = new Set([
  22009, // message sending frequency limit of the bot
  20028, // channel message frequency limit
  304045, // passive reply count of one message used up
]);

/** Platform codes of a refused access token: the host fetches a new token once and tries again. */
export const TOKEN_PLATFORM_CODES: ReadonlySet<number> = new Set([11241, 11242, 11243, 11244, 11251, 11252, 11253, 11254, 11255]);

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
  code: Extract<MessageErrorCode, `message.provider.${string}`>,
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
