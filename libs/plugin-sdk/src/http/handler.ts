import { mkdirSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join, resolve } from 'node:path';
import {
  defineErrors,
  HTTP_DEFAULTS,
  HTTP_HEADERS,
  HTTP_PATHS,
  LIMITS,
  ChatEventSchema,
  MessageEventSchema,
  MessageResponseSchema,
  PLUGIN_HTTP_ERRORS,
  SIGNATURE_ERRORS,
  validate,
  type ValidationResult,
  type EventAck,
  type MessageResponse,
  type OutboundMessage,
  type ValidationIssue,
} from '@host/protocol';
import { createLifecycleContext, type LogLevel, type Session, type TransportIO } from '../context';
import type { Plugin } from '../define-plugin';
import { dispatchEvent } from '../dispatch';
import { carrierOf } from '../rich';
import { PluginSdkError } from '../errors';
import { ReplayGuard, replayRejection, verifySignature } from './signature';

/** Options of the HTTP transport. */
export interface HttpPluginOptions {
  /**
   * The signing secret shown when the plugin was registered (e.g.
   * `process.env.HOST_PLUGIN_SECRET`), several during a rotation, or a
   * function asked on every request, for a secret that is only known after
   * the service runs: the host reveals it at registration, which needs the
   * service to answer its manifest first. `secretFromFile(path)` is such a
   * function. Until it gives a secret, events are refused with 401
   * `signature.secret_unset`; the manifest is served (unless
   * `verifyManifestRequests`).
   */
  secret: SecretSource;
  /**
   * A folder for the plugin's own files, as the host gives a stdio plugin:
   * `ctx.directories.pluginDataDirectory` is this folder, with `config/` and
   * `cache/` inside it (created when missing). Without it `ctx.directories` is
   * undefined over HTTP.
   */
  dataDirectory?: string;
  /** Settings values handlers see in `ctx.settings` (the manifest's defaults fill the gaps). */
  settings?: Record<string, unknown>;
  /** Allowed clock difference for signed requests, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Largest request body accepted, in bytes (default 4 MiB); larger ones get 413. */
  maxBodyBytes?: number;
  /**
   * Events handled at once; beyond it the handler answers 503 with
   * Retry-After, which the host retries (default: no limit).
   */
  maxConcurrentEvents?: number;
  /** Also require a valid signature on GET /host/plugin/manifest (default false; see the signing spec). */
  verifyManifestRequests?: boolean;
  /** Where `ctx.log` goes (default: one line per entry on stderr). */
  log?: (level: LogLevel, message: string, fields?: Record<string, unknown>) => void;
}

/** The signing secrets, or where to get them when a request comes. */
export type SecretSource = string | readonly string[] | (() => string | readonly string[] | undefined);

/** The secrets a source gives now: none while it gives nothing; SDK_HTTP_CONFIG_INVALID for an empty one. */
function secretsOf(source: SecretSource): readonly string[] {
  const value = typeof source === 'function' ? source() : source;
  if (value === undefined) return [];
  const list = typeof value === 'string' ? [value] : [...value];
  if (list.length === 0 || list.some((s) => typeof s !== 'string' || s.length === 0)) {
    throw new PluginSdkError(
      'SDK_HTTP_CONFIG_INVALID',
      '"secret" must be the signing secret shown at registration (for example process.env.HOST_PLUGIN_SECRET); it is empty or missing.',
    );
  }
  return list;
}

/**
 * A secret source that reads `path` (one secret per line, blank lines
 * ignored) and reads it again whenever the file changes: write the secret
 * shown at registration into it, or a second one during a rotation, without
 * restarting the service. A missing or empty file means no secret yet.
 */
export function secretFromFile(path: string): () => readonly string[] | undefined {
  let seen: { mtimeMs: number; size: number; secrets: readonly string[] | undefined } | undefined;
  return () => {
    let stat;
    try {
      stat = statSync(path);
    } catch {
      return undefined;
    }
    if (!seen || seen.mtimeMs !== stat.mtimeMs || seen.size !== stat.size) {
      const lines = readFileSync(path, 'utf8')
        .split(/\r?\n/)
        .map((line) => line.trim())
        .filter((line) => line !== '');
      seen = { mtimeMs: stat.mtimeMs, size: stat.size, secrets: lines.length > 0 ? lines : undefined };
    }
    return seen.secrets;
  };
}

/** A plain Node request handler, usable with `http.createServer(handler)`. */
export interface HttpHandler {
  (req: IncomingMessage, res: ServerResponse): void;
  /** Settles when onStart finished (requests wait for it on their own). */
  readonly ready: Promise<void>;
  /** Waits for in-flight events, then runs onStop. */
  close(): Promise<void>;
}

/**
 * Answers only this Node.js SDK gives: Express runs body parsers before the
 * router, which no other SDK's framework does in the same way.
 */
export const NODE_HTTP_ERRORS = defineErrors({
  'http.body_consumed': {
    status: 500,
    message:
      'Express: a JSON body parser read the request before httpRouter(), so the raw body the signature covers is gone. Mount httpRouter() first, or use express.raw({type: "application/json"}) for its paths.',
  },
});

/**
 * Every answer the handler gives to a request it does not process, with its
 * HTTP status: the protocol's codes every SDK shares (SIGNATURE_ERRORS,
 * PLUGIN_HTTP_ERRORS) and this SDK's own (NODE_HTTP_ERRORS).
 * docs/sdk/node.md lists each.
 */
export const HTTP_ERRORS = { ...SIGNATURE_ERRORS, ...PLUGIN_HTTP_ERRORS, ...NODE_HTTP_ERRORS } as const;

/** A code of HTTP_ERRORS. */
export type HttpErrorCode = keyof typeof HTTP_ERRORS;

/** The codes of HTTP_ERRORS. */
export const HTTP_ERROR_CODES = Object.keys(HTTP_ERRORS) as readonly HttpErrorCode[];

type Route = 'manifest' | 'events' | 'other-events';

function mapValid<T, U>(r: ValidationResult<T>, f: (value: T) => U): ValidationResult<U> {
  return r.ok ? { ok: true, value: f(r.value) } : r;
}

export function routeOf(url: string | undefined): Route | undefined {
  const path = (url ?? '/').split('?')[0]?.replace(/\/+$/, '') ?? '';
  if (path === HTTP_PATHS.manifest) return 'manifest';
  if (path === HTTP_PATHS.messageEvents) return 'events';
  if (path === HTTP_PATHS.otherEvents) return 'other-events';
  return undefined;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

/**
 * `{"error": {code, message, details?}}` with the status of the code's
 * catalogue entry; `details` is an object (`{issues}` for validation).
 */
export function sendError(
  res: ServerResponse,
  code: HttpErrorCode,
  message: string,
  details?: { issues?: readonly ValidationIssue[] },
  headers?: Record<string, string>,
): void {
  sendJson(res, HTTP_ERRORS[code].status, { error: { code, message, ...(details === undefined ? {} : { details }) } }, headers);
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) over = true;
      if (!over) chunks.push(chunk);
    });
    req.on('end', () => resolve(over ? 'too_large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function defaultSettings(plugin: Plugin): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(plugin.manifest?.settings?.configSchema ?? {})) {
    if (field.defaultValue !== undefined) out[key] = field.defaultValue;
  }
  return out;
}

/**
 * The HTTP transport of one plugin: serves the manifest and message events,
 * verifies the host's signature, and turns the messages a handler makes into
 * `outboundMessages` (replies without target, sends with their target).
 */
export class HttpPluginServer {
  readonly ready: Promise<void>;
  private readonly replay = new ReplayGuard();
  private readonly abort = new AbortController();
  private readonly session: Session;
  private readonly logLine: NonNullable<HttpPluginOptions['log']>;
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];
  private startError: unknown;
  private closed = false;

  constructor(
    private readonly plugin: Plugin,
    private readonly options: HttpPluginOptions,
  ) {
    // A fixed secret is checked now; a function is asked on every request.
    if (typeof options.secret !== 'function') secretsOf(options.secret ?? []);
    plugin.httpManifest(); // fails now, not at the first request, when the manifest is incomplete
    this.logLine =
      options.log ??
      ((level, message, fields) =>
        process.stderr.write(`[${level}] ${message}${fields && Object.keys(fields).length ? ` ${JSON.stringify(fields)}` : ''}\n`));
    const session: Session = {
      pluginId: plugin.pluginId,
      settings: Object.freeze({ ...defaultSettings(plugin), ...(options.settings ?? {}) }),
      directories: options.dataDirectory === undefined ? undefined : dataDirectories(options.dataDirectory),
      permissions: plugin.manifest?.permissions,
      intercepts: plugin.definition.intercepts ?? false,
      signal: this.abort.signal,
    };
    this.session = session;
    this.ready = (async () => {
      const onStart = plugin.definition.onStart;
      if (onStart) await onStart(createLifecycleContext(this.lifecycleIO(), session));
    })();
    // Requests report a failed start themselves; an unobserved `ready` must not crash the process.
    this.ready.catch((error: unknown) => {
      this.startError = error;
      this.logLine('error', `onStart failed: ${error instanceof Error ? error.message : String(error)}`);
    });
  }

  async handle(req: IncomingMessage, res: ServerResponse, route: Route, body?: Buffer): Promise<void> {
    try {
      if (route === 'manifest') return await this.serveManifest(req, res);
      return await this.serveEvent(req, res, body, route === 'other-events');
    } catch (error) {
      this.logLine('error', `request failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      if (!res.headersSent) sendError(res, 'plugin.internal_error', 'the plugin failed to answer; see its log');
      else res.destroy();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort(new Error('HTTP plugin closing'));
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    const onStop = this.plugin.definition.onStop;
    if (onStop && this.startError === undefined) await onStop(createLifecycleContext(this.lifecycleIO(), this.session));
  }

  private async serveManifest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return sendError(res, 'http.method_not_allowed', `use GET for ${HTTP_PATHS.manifest}`, undefined, { allow: 'GET, HEAD' });
    }
    if (this.options.verifyManifestRequests) {
      const secrets = secretsOf(this.options.secret);
      if (secrets.length === 0) return sendError(res, 'signature.secret_unset', 'no signing secret is configured yet');
      const check = verifySignature({
        headers: req.headers,
        rawBody: Buffer.alloc(0),
        secrets,
        toleranceSeconds: this.options.toleranceSeconds,
      });
      if (!check.ok) return sendError(res, check.code, check.message);
    }
    sendJson(res, 200, this.plugin.httpManifest());
  }

  private async serveEvent(req: IncomingMessage, res: ServerResponse, given?: Buffer, other = false): Promise<void> {
    const path = other ? HTTP_PATHS.otherEvents : HTTP_PATHS.messageEvents;
    if (req.method !== 'POST') return sendError(res, 'http.method_not_allowed', `use POST for ${path}`, undefined, { allow: 'POST' });
    const limit = this.options.maxBodyBytes ?? LIMITS.maxPayloadBytes;
    const raw = given ?? (await readBody(req, limit));
    if (raw === 'too_large' || raw.length > limit)
      return sendError(res, 'http.body_too_large', `the request body is larger than ${limit} bytes`);
    const secrets = secretsOf(this.options.secret);
    if (secrets.length === 0) return sendError(res, 'signature.secret_unset', 'no signing secret is configured yet');
    const check = verifySignature({
      headers: req.headers,
      rawBody: raw,
      secrets,
      toleranceSeconds: this.options.toleranceSeconds,
    });
    if (!check.ok) return sendError(res, check.code, check.message);
    const claimed = req.headers[HTTP_HEADERS.pluginId];
    if (typeof claimed === 'string' && claimed !== this.plugin.pluginId) {
      return sendError(
        res,
        'plugin.id_mismatch',
        `this service is plugin "${this.plugin.pluginId}" but the host sent an event for "${claimed}"; register the right base URL`,
      );
    }
    if (this.closed) return sendError(res, 'http.overloaded', 'the plugin is shutting down', undefined, { 'retry-after': '1' });
    const max = this.options.maxConcurrentEvents;
    // Answered before the delivery id is recorded, so the host's retry is not a replay.
    if (max !== undefined && this.inFlight >= max) {
      return sendError(res, 'http.overloaded', `the plugin is handling ${this.inFlight} events (its limit); retry later`, undefined, {
        'retry-after': '1',
      });
    }
    const nowMs = Date.now();
    const tolerance = this.options.toleranceSeconds ?? HTTP_DEFAULTS.signatureToleranceSeconds;
    if (!this.replay.remember(check.deliveryId, (check.timestamp + tolerance + 1) * 1000, nowMs)) {
      const r = replayRejection(check.deliveryId);
      return sendError(res, r.code, r.message);
    }
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch (error) {
      return sendError(res, 'event.invalid', `the body is not JSON: ${(error as Error).message}`);
    }
    // POST /host/plugin/events/deliver carries the other event types; they run through the message path.
    const parsed = other ? mapValid(validate(ChatEventSchema, json, 'event'), carrierOf) : validate(MessageEventSchema, json, 'event');
    if (!parsed.ok)
      return sendError(res, 'event.invalid', `the body is not ${other ? 'an event of another type' : 'a message event'}`, {
        issues: parsed.issues,
      });
    try {
      await this.ready;
    } catch {
      return sendError(res, 'plugin.start_failed', 'the plugin failed to start (onStart threw); see its log');
    }
    this.inFlight++;
    try {
      sendJson(res, 200, await this.process(parsed.value));
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private async process(event: Parameters<typeof dispatchEvent>[1]): Promise<MessageResponse> {
    const outbound: OutboundMessage[] = [];
    let open = true;
    const push = (item: OutboundMessage) => {
      if (!open) {
        throw new PluginSdkError(
          'SDK_SEND_UNAVAILABLE',
          'The event was already answered; over HTTP every message must be made before the handler returns (await it).',
        );
      }
      if (outbound.length >= LIMITS.maxOutboundMessages) {
        throw new PluginSdkError('SDK_OUTBOUND_LIMIT', `This event already has ${LIMITS.maxOutboundMessages} outbound messages.`);
      }
      outbound.push(item);
    };
    const io: TransportIO = {
      kind: 'http',
      reply: async (_event, message, prepared) => {
        push({ format: message.format, parts: message.parts, ...(message.keyboard ? { keyboard: message.keyboard } : {}) });
        return { accepted: true, target: prepared.target };
      },
      send: async (message, prepared) => {
        push({
          target: prepared.target,
          format: message.format,
          parts: message.parts,
          ...(message.keyboard ? { keyboard: message.keyboard } : {}),
        });
        return { accepted: true, target: prepared.target };
      },
      log: this.logLine,
    };
    // The response is decision and completion at once (docs/protocol/v2.md 5.3): it
    // goes out when the handler ended; intercept()/pass() only settle `intercepted`.
    let ack: EventAck | undefined;
    const completion = await dispatchEvent(this.plugin, event, io, this.session, { onAck: (value) => (ack = value) });
    open = false;
    const decided = ack as EventAck;
    const error = decided.error ?? completion?.error ?? null;
    const response: MessageResponse = {
      accepted: decided.accepted && error === null,
      intercepted: decided.intercepted,
      outboundMessages: outbound,
      error,
    };
    return MessageResponseSchema.parse(response);
  }

  /** Outside an event there is no response to carry messages. */
  private lifecycleIO(): TransportIO {
    const unavailable = async (): Promise<never> => {
      throw new PluginSdkError(
        'SDK_SEND_UNAVAILABLE',
        'An HTTP plugin cannot send outside an event: the host takes messages only in event responses.',
      );
    };
    return { kind: 'http', reply: unavailable, send: unavailable, log: this.logLine };
  }
}

/** The folders of `dataDirectory`, laid out as the host lays out a stdio plugin's, created when missing. */
function dataDirectories(dataDirectory: string): NonNullable<Session['directories']> {
  const data = resolve(dataDirectory);
  const directories = {
    pluginDirectory: process.cwd(),
    pluginDataDirectory: data,
    pluginConfigDirectory: join(data, 'config'),
    pluginCacheDirectory: join(data, 'cache'),
  };
  for (const dir of [directories.pluginConfigDirectory, directories.pluginCacheDirectory]) mkdirSync(dir, { recursive: true });
  return directories;
}
