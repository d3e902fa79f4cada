import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

/** One message call the fake received. */
export interface RecordedMessage {
  path: string;
  /** `group`, `user` or `channel`, and the id from the path. */
  targetType: 'group' | 'user' | 'channel';
  targetId: string;
  authorization: string | undefined;
  unionAppId: string | undefined;
  body: Record<string, unknown>;
  at: number;
}

/** One rich-media upload the fake took (POST /v2/groups/{id}/files or /v2/users/{id}/files). */
export interface RecordedUpload {
  path: string;
  targetType: 'group' | 'user';
  targetId: string;
  body: Record<string, unknown>;
  /**
   * What the fake fetched from `body.url`, as the platform does, or decoded from `body.file_data` (its content
   * type then read from the bytes' signature).
   */
  fetched: { status: number; contentType: string; bytes: number } | null;
  /** The file_info answered, when the upload succeeded. */
  fileInfo?: string;
  at: number;
}

/** One interaction acknowledgement (PUT /interactions/{id}). */
export interface RecordedInteractionAck {
  interactionId: string;
  body: Record<string, unknown>;
  at: number;
}

/** A canned answer for the next message calls, instead of the normal behaviour. */
export interface ScriptedAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Also for token requests (default: message calls only). */
  token?: boolean;
  /** Take the message as usual, then answer this instead of 200: a reply that arrived but whose answer failed. */
  afterDelivery?: boolean;
}

export interface FakeQqPlatformOptions {
  appId: string;
  secret: string;
  /** expires_in of issued tokens in seconds (default 7200). */
  tokenLifetimeSeconds?: number;
  /** Messages kept in `messages` at most (default 10,000; the count goes on). */
  maxRecorded?: number;
  /** Port on 127.0.0.1 (default: any free one). */
  port?: number;
  /** Called for each accepted message (benchmarks match replies to events with it). */
  onMessage?: (message: RecordedMessage) => void;
  /** How long each message call takes before it is answered, as a busy platform's do (default 0). */
  latencyMilliseconds?: number;
  /** Whether the bot may send Markdown (default true); false answers msg_type 2 with 40034012, as for a bot without the permission. */
  markdownAllowed?: boolean;
  /** ttl in seconds of the file_info an upload answers (default 3600; 0: no end). */
  fileInfoTtlSeconds?: number;
}

/** Largest file the fake fetches for an upload. */
const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
/** Content types the platform takes per file_type (rich-media.md: images png/jpg, video mp4, voice silk). */
const UPLOAD_TYPES: Record<number, RegExp> = { 1: /^image\/(png|jpe?g)$/i, 2: /^video\/mp4$/i, 3: /^audio\/(silk|x-silk)$/i };

/** The content type of a PNG or JPEG by its first bytes, as the platform converts them; '' for anything else. */
function signatureType(bytes: Buffer): string {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  return '';
}

/**
 * A local stand-in for the QQ Bot Open Platform's OpenAPI, for tests and
 * benchmarks: the access token endpoint (app id and secret checked, tokens
 * with a lifetime) and the group, c2c and channel message endpoints (token
 * header checked, bodies checked like the platform does: msg_type 0 needs
 * content, 2 needs markdown.content). Like the platform (answers as users of
 * its SDKs report them; sources in platform-errors.ts):
 * - a group or C2C message without msg_id or event_id is an active message,
 *   refused with 400 code 40034102 (active messages ended on 2025-04-21);
 * - a repeated msg_id + msg_seq is refused with 400 code 40054005;
 * - the sixth reply to one msg_id is refused with 400 code 22009;
 * - Markdown from a bot without the permission (`markdownAllowed: false`) is
 *   refused with 400 code 40034012.
 * - the rich-media upload (POST /v2/groups/{id}/files, /v2/users/{id}/files)
 *   fetches `url` itself, or takes the bytes base64 in `file_data` (exactly one
 *   of the two), and answers `file_info` and `ttl`, or 400 with code 304082
 *   when the URL cannot be fetched or `file_data` is not base64 of 1 byte to
 *   10 MiB, and 304083 when the file is not of its `file_type` (PNG or JPEG for
 *   images: the URL's content type, or the signature of `file_data`'s bytes);
 *   file_type 4 (files) is refused;
 * - msg_type 7 needs a non-empty content and a `media.file_info` this fake
 *   issued for the same kind of target (group or user), or 400;
 * - a keyboard goes only with msg_type 2 and has at most 5 rows of at most 5
 *   buttons, each with render_data.label, action.type 0 to 2, action.data and
 *   action.permission, or 400;
 * - PUT /interactions/{id} with `{code}` acknowledges a button click.
 * Failures are scripted with `failNext`.
 */
export class FakeQqPlatform {
  readonly messages: RecordedMessage[] = [];
  readonly uploads: RecordedUpload[] = [];
  readonly interactionAcks: RecordedInteractionAck[] = [];
  /** file_info values issued, with the kind of target they serve. */
  private readonly fileInfos = new Map<string, 'group' | 'user'>();
  messageCount = 0;
  tokenRequests = 0;
  /** Every access token issued, oldest first. */
  readonly issuedTokens: string[] = [];
  private readonly tokens = new Map<string, number>();
  private readonly seenSeq = new Set<string>();
  /** Replies taken per msg_id (group and C2C). */
  private readonly repliesPerMessage = new Map<string, number>();
  private script: ScriptedAnswer[] = [];
  private sent = 0;
  private waiters: { count: number; resolve: () => void }[] = [];

  private constructor(
    private readonly o: FakeQqPlatformOptions,
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(o: FakeQqPlatformOptions): Promise<FakeQqPlatform> {
    const holder: { platform?: FakeQqPlatform } = {};
    const server = createServer((req, res) => void holder.platform!.handle(req, res));
    server.keepAliveTimeout = 10_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(o.port ?? 0, '127.0.0.1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    holder.platform = new FakeQqPlatform(o, server, `http://127.0.0.1:${port}`);
    return holder.platform;
  }

  get tokenUrl(): string {
    return `${this.url}/app/getAppAccessToken`;
  }

  get apiBaseUrl(): string {
    return this.url;
  }

  /** The next `times` calls get `answer` (message calls, and token calls when `answer.token`). */
  failNext(answer: ScriptedAnswer, times = 1): void {
    for (let i = 0; i < times; i++) this.script.push(answer);
  }

  /** Every token issued so far stops working (the platform answers 401), as when tokens expire early. */
  expireTokens(): void {
    this.tokens.clear();
  }

  /** Resolves once `count` messages were accepted in all. */
  waitForMessages(count: number, timeoutMs = 10_000): Promise<void> {
    if (this.messageCount >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the fake platform got ${this.messageCount} of ${count} messages`)), timeoutMs);
      this.waiters.push({
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  /** Resolves once `ready()` is true, polling; rejects after `timeoutMs`. */
  async waitFor(ready: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!ready()) {
      if (Date.now() > until) throw new Error(`the fake platform did not see ${what} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      return answer(res, 400, { code: 40001, message: 'invalid json' });
    }
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method === 'POST' && path === '/app/getAppAccessToken') return this.token(body, res);
    const upload = /^\/v2\/(groups|users)\/([^/]+)\/files$/.exec(path);
    if (req.method === 'POST' && upload) {
      if (!this.authorized(req)) return answer(res, 401, { code: 11244, message: 'token not exist or expire' });
      return this.upload(upload[1] === 'groups' ? 'group' : 'user', decodeURIComponent(upload[2]!), path, body, res);
    }
    const ack = /^\/interactions\/([^/]+)$/.exec(path);
    if (req.method === 'PUT' && ack) {
      if (!this.authorized(req)) return answer(res, 401, { code: 11244, message: 'token not exist or expire' });
      if (!Number.isInteger(body['code'])) return answer(res, 400, { code: 40034006, message: 'code is required' });
      this.interactionAcks.push({ interactionId: decodeURIComponent(ack[1]!), body, at: Date.now() });
      res.writeHead(204).end();
      return;
    }
    const m = /^\/(?:v2\/(groups|users)|(channels))\/([^/]+)\/messages$/.exec(path);
    if (req.method !== 'POST' || !m) return answer(res, 404, { code: 404, message: 'not found' });
    if (this.o.latencyMilliseconds) await new Promise((r) => setTimeout(r, this.o.latencyMilliseconds));
    const scripted = this.takeScript(false);
    if (scripted && !scripted.afterDelivery) return answer(res, scripted.status, scripted.body ?? {}, scripted.headers);
    const authorization = req.headers['authorization'];
    const token = /^QQBot (\S+)$/.exec(String(authorization ?? ''))?.[1];
    const expiresAt = token ? this.tokens.get(token) : undefined;
    if (expiresAt === undefined || expiresAt < Date.now()) return answer(res, 401, { code: 11244, message: 'token not exist or expire' });
    const targetType = m[1] === 'groups' ? 'group' : m[1] === 'users' ? 'user' : 'channel';
    const problem = checkBody(targetType, body) ?? this.checkMedia(targetType, body);
    if (problem) return answer(res, 400, { code: 40034006, message: problem });
    if (targetType !== 'channel') {
      const msgId = body['msg_id'];
      if (typeof msgId !== 'string' && typeof body['event_id'] !== 'string') {
        return answer(res, 400, { message: '主动消息失败, 无权限', code: 40034102, err_code: 40034102, trace_id: traceId() });
      }
      if (body['msg_type'] === 2 && this.o.markdownAllowed === false) {
        return answer(res, 400, { message: '不允许发送原生 markdown', code: 40034012, err_code: 40034012, trace_id: traceId() });
      }
      if (typeof msgId === 'string') {
        const key = `${msgId}#${String(body['msg_seq'] ?? 1)}`;
        if (this.seenSeq.has(key)) {
          return answer(res, 400, { message: '消息被去重，请检查请求msgseq', code: 40054005, err_code: 40054005, trace_id: traceId() });
        }
        const replies = this.repliesPerMessage.get(msgId) ?? 0;
        if (replies >= 5) return answer(res, 400, { message: 'msg limit exceed', code: 22009, err_code: 22009, trace_id: traceId() });
        // Bounded like the platform's own memory of replies: the oldest are forgotten first.
        if (this.seenSeq.size >= 100_000) this.seenSeq.delete(this.seenSeq.values().next().value as string);
        if (this.repliesPerMessage.size >= 100_000) this.repliesPerMessage.delete(this.repliesPerMessage.keys().next().value as string);
        this.seenSeq.add(key);
        this.repliesPerMessage.set(msgId, replies + 1);
      }
    }
    this.messageCount++;
    const recorded: RecordedMessage = {
      path,
      targetType,
      targetId: decodeURIComponent(m[3]!),
      authorization: typeof authorization === 'string' ? authorization : undefined,
      unionAppId: typeof req.headers['x-union-appid'] === 'string' ? req.headers['x-union-appid'] : undefined,
      body,
      at: Date.now(),
    };
    if (this.messages.length < (this.o.maxRecorded ?? 10_000)) this.messages.push(recorded);
    this.o.onMessage?.(recorded);
    if (scripted) answer(res, scripted.status, scripted.body ?? {}, scripted.headers);
    else answer(res, 200, { id: `fake-msg-${++this.sent}`, timestamp: new Date().toISOString() });
    this.waiters = this.waiters.filter((w) => {
      if (this.messageCount < w.count) return true;
      w.resolve();
      return false;
    });
  }

  private authorized(req: IncomingMessage): boolean {
    const token = /^QQBot (\S+)$/.exec(String(req.headers['authorization'] ?? ''))?.[1];
    const expiresAt = token ? this.tokens.get(token) : undefined;
    return expiresAt !== undefined && expiresAt >= Date.now();
  }

  private checkMedia(targetType: string, body: Record<string, unknown>): string | null {
    if (body['msg_type'] !== 7) return null;
    const info = (body['media'] as { file_info?: unknown } | undefined)?.file_info;
    if (typeof info !== 'string') return 'media.file_info is required for msg_type 7';
    const scope = this.fileInfos.get(info);
    if (scope === undefined) return 'media.file_info is not one this platform issued';
    if (scope !== targetType) return `media.file_info was uploaded for ${scope} targets, not ${targetType}`;
    return null;
  }

  private async upload(
    targetType: 'group' | 'user',
    targetId: string,
    path: string,
    body: Record<string, unknown>,
    res: ServerResponse,
  ): Promise<void> {
    const recorded: RecordedUpload = { path, targetType, targetId, body, fetched: null, at: Date.now() };
    this.uploads.push(recorded);
    const fileType = body['file_type'];
    const url = body['url'];
    const fileData = body['file_data'];
    if (
      typeof fileType !== 'number' ||
      ![1, 2, 3, 4].includes(fileType) ||
      (typeof url === 'string') === (typeof fileData === 'string') ||
      typeof body['srv_send_msg'] !== 'boolean'
    ) {
      return answer(res, 400, { code: 40034006, message: 'file_type (1 to 4), url or file_data, and srv_send_msg are required' });
    }
    if (fileType === 4) return answer(res, 400, { code: 40034006, message: 'file_type 4 is not open' });
    if (typeof fileData === 'string') {
      const valid = fileData.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(fileData);
      const bytes = valid ? Buffer.from(fileData, 'base64') : Buffer.alloc(0);
      recorded.fetched = { status: 200, contentType: signatureType(bytes), bytes: bytes.length };
    } else {
      try {
        const got = await request(url as string, { method: 'GET', headersTimeout: 5_000, bodyTimeout: 5_000 });
        let bytes = 0;
        for await (const chunk of got.body) {
          bytes += (chunk as Buffer).length;
          if (bytes > MAX_UPLOAD_BYTES) {
            got.body.destroy();
            break;
          }
        }
        const contentType = String(got.headers['content-type'] ?? '')
          .split(';')[0]!
          .trim();
        recorded.fetched = { status: got.statusCode, contentType, bytes };
      } catch {
        return answer(res, 400, { code: 304082, message: 'upload media info fail', err_code: 304082, trace_id: traceId() });
      }
    }
    const f = recorded.fetched;
    if (f.status !== 200 || f.bytes === 0 || f.bytes > MAX_UPLOAD_BYTES) {
      return answer(res, 400, { code: 304082, message: 'upload media info fail', err_code: 304082, trace_id: traceId() });
    }
    if (!UPLOAD_TYPES[fileType]!.test(f.contentType)) {
      return answer(res, 400, { code: 304083, message: 'convert media info fail', err_code: 304083, trace_id: traceId() });
    }
    const fileInfo = randomBytes(24).toString('base64');
    recorded.fileInfo = fileInfo;
    this.fileInfos.set(fileInfo, targetType);
    answer(res, 200, { file_uuid: randomBytes(8).toString('hex'), file_info: fileInfo, ttl: this.o.fileInfoTtlSeconds ?? 3600 });
  }

  private token(body: Record<string, unknown>, res: ServerResponse): void {
    this.tokenRequests++;
    const scripted = this.takeScript(true);
    if (scripted) return answer(res, scripted.status, scripted.body ?? {}, scripted.headers);
    if (body['appId'] !== this.o.appId || body['clientSecret'] !== this.o.secret) {
      return answer(res, 400, { code: 100016, message: 'invalid appid or secret' });
    }
    const lifetime = this.o.tokenLifetimeSeconds ?? 7200;
    const token = randomBytes(16).toString('hex');
    this.tokens.set(token, Date.now() + lifetime * 1000);
    if (this.issuedTokens.length < 1000) this.issuedTokens.push(token);
    // The platform gives expires_in as a string.
    answer(res, 200, { access_token: token, expires_in: String(lifetime) });
  }

  private takeScript(token: boolean): ScriptedAnswer | undefined {
    const next = this.script[0];
    if (!next || Boolean(next.token) !== token) return undefined;
    return this.script.shift();
  }
}

function traceId(): string {
  return randomBytes(16).toString('hex');
}

function checkBody(targetType: string, body: Record<string, unknown>): string | null {
  if (targetType === 'channel') return typeof body['content'] === 'string' ? null : 'content is required';
  if (body['msg_type'] === 0)
    return typeof body['content'] === 'string' && body['content'] !== '' ? null : 'content is required for msg_type 0';
  if (body['keyboard'] !== undefined && body['msg_type'] !== 2) return 'keyboard goes only with msg_type 2';
  if (body['msg_type'] === 2) {
    const md = body['markdown'] as { content?: unknown } | undefined;
    if (targetType !== 'group') return 'markdown is not allowed here';
    if (typeof md?.content !== 'string' || md.content === '') return 'markdown.content is required for msg_type 2';
    return body['keyboard'] === undefined ? null : checkKeyboard(body['keyboard']);
  }
  if (body['msg_type'] === 7)
    return typeof body['content'] === 'string' && body['content'] !== '' ? null : 'content is required for msg_type 7';
  return 'msg_type must be 0, 2 or 7';
}

/** The custom keyboard of msg-btn.md (tencent-connect/bot-docs): at most 5 rows of at most 5 buttons. */
function checkKeyboard(keyboard: unknown): string | null {
  const rows = (keyboard as { content?: { rows?: unknown } } | null)?.content?.rows;
  if (!Array.isArray(rows) || rows.length === 0 || rows.length > 5) return 'keyboard.content.rows must have 1 to 5 rows';
  for (const row of rows) {
    const buttons = (row as { buttons?: unknown } | null)?.buttons;
    if (!Array.isArray(buttons) || buttons.length === 0 || buttons.length > 5) return 'a keyboard row must have 1 to 5 buttons';
    for (const b of buttons as {
      render_data?: { label?: unknown };
      action?: { type?: unknown; data?: unknown; permission?: { type?: unknown } };
    }[]) {
      if (typeof b?.render_data?.label !== 'string' || b.render_data.label === '') return 'a button needs render_data.label';
      if (![0, 1, 2].includes(b.action?.type as number)) return 'a button needs action.type 0, 1 or 2';
      if (typeof b.action?.data !== 'string') return 'a button needs action.data';
      if (typeof b.action?.permission?.type !== 'number') return 'a button needs action.permission.type';
    }
  }
  return null;
}

function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
