import { backoffDelay, HostError, isHostError } from '@host/host-core';
import { Agent, request, type Dispatcher } from 'undici';
import {
  ACCOUNT_PLATFORM_CODES,
  ACTIVE_UNAVAILABLE_PLATFORM_CODES,
  DUPLICATE_PLATFORM_CODES,
  MARKDOWN_REFUSED_PLATFORM_CODES,
  MEDIA_FAILED_PLATFORM_CODES,
  parsePlatformError,
  platformFailure,
  RATE_LIMIT_PLATFORM_CODES,
  REPLY_EXPIRED_PLATFORM_CODES,
  REPLY_LIMIT_PLATFORM_CODES,
  REPLY_REFUSED_PLATFORM_CODES,
  RETRY_ONCE_PLATFORM_CODES,
  TOKEN_PLATFORM_CODES,
  type PlatformCode,
  type PlatformErrorBody,
} from './platform-errors';

export interface QqBotApiClientOptions {
  appId: string;
  secret: string;
  apiBaseUrl: string;
  tokenUrl: string;
  /** Shared connection pool (default: one Agent per client). */
  dispatcher?: Dispatcher;
  /** A token is renewed this long before it expires (default 60 s, at most half its lifetime). */
  refreshMarginMilliseconds?: number;
  /** Time for one HTTP exchange with the platform (default 10 s). */
  requestTimeoutMilliseconds?: number;
  /** Further attempts after a server error or lost connection, only where a retry cannot post twice (default 2). */
  maxRetries?: number;
  /** Delay before the first retry, doubled for each next one, less up to a fifth at random (default 250 ms). */
  retryDelayMilliseconds?: number;
  /** A rate limit is waited out once when the platform's Retry-After is at most this long (default 2 s). */
  maxRetryAfterMilliseconds?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** What one message call gives: the platform's id of the sent message. */
export interface PostResult {
  id: string;
  /**
   * True when a repeated attempt was answered "already sent" (40054005): an
   * earlier attempt that timed out or failed on the way back was delivered.
   */
  alreadyDelivered?: boolean;
}

/** Bytes of a platform answer the host reads at most. */
const MAX_RESPONSE_BYTES = 64 * 1024;

interface Answer {
  status: number;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

class NetworkFailure extends Error {}

/**
 * One bot account's OpenAPI client: fetches the access token from the app id
 * and secret, keeps it until shortly before it expires (one fetch at a time,
 * shared by concurrent sends), and posts messages with the token header.
 *
 * Retries are limited to what cannot post a message twice (codes and their
 * sources in platform-errors.ts):
 * - 401 or a token error code: the token is fetched again once and the call repeated;
 * - a code the platform documents as a failed check to retry once: repeated once;
 * - a rate limit with Retry-After within `maxRetryAfterMilliseconds`: waited out once;
 * - a server error, timeout or lost connection: retried only for passive
 *   replies (`idempotent`), which carry msg_id and msg_seq, a pair the platform
 *   accepts once. An active message is never retried after it may have arrived.
 *   A retry the platform answers with its duplicate code (40054005) was
 *   delivered by the attempt before it: taken as sent, without an id.
 */
export class QqBotApiClient {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private token: { value: string; renewAt: number } | undefined;
  private pending: Promise<string> | undefined;
  /** Access tokens fetched so far (for the admin view and tests). */
  tokensFetched = 0;

  constructor(private readonly o: QqBotApiClientOptions) {
    this.ownsDispatcher = !o.dispatcher;
    this.dispatcher = o.dispatcher ?? new Agent({ keepAliveTimeout: 10_000, connections: 64 });
    this.now = o.now ?? Date.now;
    this.sleep = o.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  /** The current access token, fetched when there is none or it is about to expire. */
  async accessToken(): Promise<string> {
    if (this.token && this.now() < this.token.renewAt) return this.token.value;
    this.pending ??= this.fetchToken().finally(() => (this.pending = undefined));
    return this.pending;
  }

  /** Forgets the token (after the platform refused it). */
  invalidateToken(refused: string): void {
    if (this.token?.value === refused) this.token = undefined;
  }

  private async fetchToken(): Promise<string> {
    let answer: Answer;
    try {
      answer = await this.exchange(this.o.tokenUrl, { appId: this.o.appId, clientSecret: this.o.secret }, {});
    } catch (e) {
      throw platformFailure(
        'message.provider.unavailable',
        `the access token endpoint ${this.o.tokenUrl} did not answer: ${errorText(e)}`,
        null,
        {},
      );
    }
    const platform = parsePlatformError(answer.text);
    if (answer.status >= 500) {
      throw platformFailure('message.provider.unavailable', 'the access token endpoint failed', answer.status, platform);
    }
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(answer.text) as Record<string, unknown>;
    } catch {
      // handled below
    }
    const value = body?.['access_token'];
    const expiresIn = Number(body?.['expires_in']);
    if (answer.status !== 200 || typeof value !== 'string' || value === '' || !(expiresIn > 0)) {
      throw platformFailure(
        'message.provider.auth_failed',
        `no access token for app id ${this.o.appId}: check its app id and secret`,
        answer.status,
        platform,
      );
    }
    const lifetime = expiresIn * 1000;
    const margin = Math.min(this.o.refreshMarginMilliseconds ?? 60_000, lifetime / 2);
    this.token = { value, renewAt: this.now() + lifetime - margin };
    this.tokensFetched++;
    return value;
  }

  /**
   * POSTs `body` to `path` of the OpenAPI with the access token; see the class for retries. `sentBefore`: an
   * earlier process may have posted this passive reply already (recorded, never marked sent), so the platform's
   * duplicate answer to the first attempt means it arrived then.
   */
  async post(path: string, body: unknown, idempotent: boolean, sentBefore = false): Promise<PostResult> {
    const answer = await this.call('POST', path, body, idempotent, idempotent && sentBefore);
    return answer.alreadyDelivered ? { id: '', alreadyDelivered: true } : { id: answer.id };
  }

  /**
   * Uploads a file through the rich-media endpoint (`path` is /v2/groups/{group_openid}/files or
   * /v2/users/{openid}/files; rich-media.md of tencent-connect/bot-docs): by URL, which the platform fetches, or
   * as the bytes themselves, base64 in `file_data` in place of `url` (listed in rich-media.md, marked there "暂未支持"
   * in its April 2025 text; nonebot/adapter-qq sends it so in `post_group_files` and `post_c2c_files`,
   * nonebot/adapters/qq/bot.py; see docs/operator/qqbot.md). The platform answers
   * `file_info`, which a msg_type 7 message sends, and its `ttl` in seconds (0: no end). With
   * `srv_send_msg: false` nothing is sent, so a retry after a lost answer is safe.
   *
   * @throws HostError message.media.upload_failed when the platform could not fetch or convert the file
   */
  async uploadMedia(
    path: string,
    fileType: number,
    source: string | { fileData: Buffer; name: string },
  ): Promise<{ fileInfo: string; ttlSeconds: number }> {
    const what = typeof source === 'string' ? source : source.name;
    const body =
      typeof source === 'string'
        ? { file_type: fileType, url: source, srv_send_msg: false }
        : { file_type: fileType, file_data: source.fileData.toString('base64'), srv_send_msg: false };
    let answer: { json: unknown };
    try {
      answer = await this.call('POST', path, body, true);
    } catch (e) {
      const code = isHostError(e) ? e.details?.['providerCode'] : undefined;
      if (typeof code === 'number' && MEDIA_FAILED_PLATFORM_CODES.has(code)) {
        throw new HostError('message.media.upload_failed', `the platform could not take ${what}: ${(e as Error).message}`, {
          ...(e as HostError).details,
          ...(typeof source === 'string' ? { url: source } : {}),
        });
      }
      throw e;
    }
    const json = answer.json as { file_info?: unknown; ttl?: unknown } | null;
    if (typeof json?.file_info !== 'string' || json.file_info === '') {
      throw new HostError(
        'message.media.upload_failed',
        `the platform answered the upload of ${what} without file_info`,
        typeof source === 'string' ? { url: source } : {},
      );
    }
    const ttl = typeof json.ttl === 'number' && Number.isFinite(json.ttl) && json.ttl > 0 ? json.ttl : 0;
    return { fileInfo: json.file_info, ttlSeconds: ttl };
  }

  /**
   * Tells the platform an INTERACTION_CREATE was received (`PUT /interactions/{id}` with `code` 0, msg-btn.md
   * of tencent-connect/bot-docs): until then the user's client shows the click as loading. Repeating it is
   * harmless, so it is retried like a passive reply.
   */
  async acknowledgeInteraction(interactionId: string, code = 0): Promise<void> {
    await this.call('PUT', `/interactions/${encodeURIComponent(interactionId)}`, { code }, true);
  }

  private async call(
    method: 'POST' | 'PUT',
    path: string,
    body: unknown,
    idempotent: boolean,
    sentBefore = false,
  ): Promise<{ id: string; json: unknown; alreadyDelivered?: boolean }> {
    const url = this.o.apiBaseUrl.replace(/\/+$/, '') + path;
    const maxRetries = idempotent ? (this.o.maxRetries ?? 2) : 0;
    let retries = 0;
    let refreshed = false;
    let waitedRateLimit = false;
    let retriedCheck = false;
    // An attempt that timed out, lost its connection or got a server error may have been delivered.
    let mayHaveArrived = sentBefore;
    for (;;) {
      const token = await this.accessToken();
      let answer: Answer;
      try {
        answer = await this.exchange(url, body, { authorization: `QQBot ${token}`, 'x-union-appid': this.o.appId }, method);
      } catch (e) {
        mayHaveArrived = true;
        if (retries < maxRetries) {
          await this.sleep(this.backoff(retries++));
          continue;
        }
        throw platformFailure(
          'message.provider.unavailable',
          `the platform did not answer ${path}: ${errorText(e)}`,
          null,
          {},
          retryNote(idempotent, retries),
        );
      }
      // 201 and 202 carry an error body, e.g. 304023/304024 (accepted, held for review): taken, without an id.
      if (answer.status >= 200 && answer.status < 300) {
        let id = '';
        let json: unknown = null;
        try {
          json = JSON.parse(answer.text) as unknown;
          const parsed = json as { id?: unknown } | null;
          if (typeof parsed?.id === 'string') id = parsed.id;
        } catch {
          // A 2xx without a JSON body (an interaction's acknowledgement answers nothing): sent, without an id.
        }
        return { id, json };
      }
      const platform = parsePlatformError(answer.text);
      if (!refreshed && (answer.status === 401 || isCode(platform, TOKEN_PLATFORM_CODES))) {
        refreshed = true;
        this.invalidateToken(token);
        continue;
      }
      if (!retriedCheck && isCode(platform, RETRY_ONCE_PLATFORM_CODES)) {
        retriedCheck = true;
        continue;
      }
      if (mayHaveArrived && isCode(platform, DUPLICATE_PLATFORM_CODES)) return { id: '', json: null, alreadyDelivered: true };
      if (isCode(platform, REPLY_LIMIT_PLATFORM_CODES)) {
        throw platformFailure(
          'message.reference.reply_limit',
          'the platform says the message being answered has had all its replies (5 per received message)',
          answer.status,
          platform,
        );
      }
      if (isCode(platform, ACTIVE_UNAVAILABLE_PLATFORM_CODES)) {
        throw platformFailure(
          'message.provider.active_unavailable',
          'the platform refused a message that answers no received message (active messages ended on 2025-04-21)',
          answer.status,
          platform,
        );
      }
      if (isCode(platform, REPLY_REFUSED_PLATFORM_CODES)) {
        throw platformFailure(
          'message.reference.refused',
          `the platform will not link the reply to the message it answers: ${REPLY_REFUSED_PLATFORM_CODES.get(platform.code!)!.meaning}`,
          answer.status,
          platform,
        );
      }
      if (isCode(platform, MARKDOWN_REFUSED_PLATFORM_CODES)) {
        throw platformFailure('message.provider.rejected', 'the platform refused Markdown from this bot', answer.status, platform, {
          markdownRefused: true,
        });
      }
      if (answer.status === 429 || isCode(platform, RATE_LIMIT_PLATFORM_CODES)) {
        const retryAfter = retryAfterMilliseconds(answer.headers['retry-after']);
        if (!waitedRateLimit && retryAfter !== undefined && retryAfter <= (this.o.maxRetryAfterMilliseconds ?? 2000)) {
          waitedRateLimit = true;
          await this.sleep(retryAfter);
          continue;
        }
        throw platformFailure('message.provider.rate_limited', 'the platform refused the message: rate limit', answer.status, platform, {
          ...(retryAfter !== undefined ? { retryAfterMilliseconds: retryAfter } : {}),
        });
      }
      if (isCode(platform, REPLY_EXPIRED_PLATFORM_CODES)) {
        throw platformFailure(
          'message.reference.expired',
          'the platform says the message being answered is too old to reply to; send a new message instead',
          answer.status,
          platform,
        );
      }
      if (isCode(platform, ACCOUNT_PLATFORM_CODES)) {
        throw platformFailure(
          'message.provider.auth_failed',
          `the platform refused bot account ${this.o.appId}: ${ACCOUNT_PLATFORM_CODES.get(platform.code!)!.meaning}`,
          answer.status,
          platform,
        );
      }
      if (answer.status >= 500) {
        mayHaveArrived = true;
        if (retries < maxRetries) {
          await this.sleep(this.backoff(retries++));
          continue;
        }
        throw platformFailure(
          'message.provider.unavailable',
          'the platform failed',
          answer.status,
          platform,
          retryNote(idempotent, retries),
        );
      }
      if (answer.status === 401 || answer.status === 403) {
        throw platformFailure('message.provider.auth_failed', 'the platform refused the access token of this bot', answer.status, platform);
      }
      throw platformFailure('message.provider.rejected', 'the platform refused the message', answer.status, platform);
    }
  }

  /** The wait before retry `retry`: doubling from retryDelayMilliseconds, a fifth of it at random, at most 4 s. */
  private backoff(retry: number): number {
    return backoffDelay({ baseMilliseconds: this.o.retryDelayMilliseconds ?? 250, maxMilliseconds: 4_000, jitter: 0.2 }, retry);
  }

  private async exchange(url: string, body: unknown, headers: Record<string, string>, method: 'POST' | 'PUT' = 'POST'): Promise<Answer> {
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method,
        dispatcher: this.dispatcher,
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
        headersTimeout: this.o.requestTimeoutMilliseconds ?? 10_000,
        bodyTimeout: this.o.requestTimeoutMilliseconds ?? 10_000,
      });
    } catch (e) {
      throw new NetworkFailure(errorText(e));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_RESPONSE_BYTES) {
          res.body.destroy();
          break;
        }
        chunks.push(chunk as Buffer);
      }
    } catch (e) {
      throw new NetworkFailure(errorText(e));
    }
    return { status: res.statusCode, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers };
  }
}

function isCode(platform: PlatformErrorBody, codes: ReadonlyMap<number, PlatformCode>): boolean {
  return platform.code !== undefined && codes.has(platform.code);
}

function retryNote(idempotent: boolean, retries: number): Record<string, unknown> {
  return {
    retries,
    retried: idempotent ? 'passive reply: retried with the same msg_id and msg_seq' : 'not retried: an active message could arrive twice',
  };
}

/** Retry-After in milliseconds: delay seconds, or an HTTP date. */
export function retryAfterMilliseconds(value: string | string[] | undefined): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function errorText(e: unknown): string {
  if (e instanceof HostError) return e.message;
  const err = e as { message?: string; code?: string; cause?: { code?: string; message?: string } };
  return [err?.code ?? err?.cause?.code, err?.message ?? String(e)].filter(Boolean).join(' ');
}
