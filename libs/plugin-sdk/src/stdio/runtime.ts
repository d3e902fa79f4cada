import {
  CancelParamsSchema,
  InitializeParamsSchema,
  LIMITS,
  METHOD_LIST,
  ChatEventSchema,
  MessageEventSchema,
  Methods,
  PROTOCOL_VERSION,
  PingParamsSchema,
  SettingsChangedParamsSchema,
  RUNTIME_DEFAULTS,
  RpcErrorCode,
  RuntimeLimitsSchema,
  StopParamsSchema,
  validate,
  type FrameLimits,
  type InitializeParams,
  type InitializeResult,
  type Target,
} from '@host/protocol';
import {
  createLifecycleContext,
  type LogLevel,
  type MediaUploadOptions,
  type Session,
  type TransportIO,
  type UploadedMedia,
} from '../context';
import type { Plugin } from '../define-plugin';
import type { EventCompletion } from '../dispatch';
import { PluginSdkError } from '../errors';
import { SDK_NAME, SDK_VERSION } from '../version';
import { RpcConnection, type IncomingRequest } from './connection';
import { hostFailure } from './host-errors';
import { HOST_STDIO_FLAG, enterProtocolMode, isProtocolMode } from './protocol-mode';
import { EventRunner } from './event-runner';
import { carrierOf } from '../rich';

/** Streams and exit hook of the stdio runtime; the defaults are the process's own. */
export interface StdioOptions {
  /** Arguments to look for `--host-stdio` in (default `process.argv`). */
  argv?: readonly string[];
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  /** Called with the exit code when the runtime ends (default `process.exit`). */
  exit?: (code: number) => void;
}

/** How long onStop may run when stdin closed (the host is gone) before the process exits anyway. */
const ORPHAN_STOP_MILLISECONDS = 1000;

/** Exit code when the plugin is started without `--host-stdio` (it prints help instead). */
export const USAGE_EXIT_CODE = 2;

function usage(plugin: Plugin): string {
  const m = plugin.manifest;
  const title = m ? `${m.name} ${m.version} (${plugin.pluginId})` : plugin.pluginId;
  return [
    `${title}: a protocol v2 chat-bot plugin built with ${SDK_NAME} ${SDK_VERSION}.`,
    '',
    `The host starts this program with ${HOST_STDIO_FLAG} and speaks JSON-RPC over stdin/stdout;`,
    'it is not meant to be run by hand.',
    '',
    '  Install: pack it (npx host-plugin pack) and upload artifacts/<pluginId>.zip to the host (POST /api/plugins/packages).',
    '  Test:    drive it with createTestHost() from @host/plugin-sdk-v2/testing in a unit test.',
    `  Debug:   run it with ${HOST_STDIO_FLAG} and write Content-Length framed JSON-RPC to stdin.`,
    '',
  ].join('\n');
}

/**
 * Runs a plugin as a stdio process (what `plugin.main()` calls). See
 * docs/sdk/node.md ("stdio runtime") for the lifecycle: handshake first;
 * each event's decision (ACK) as soon as it is known and `events.completed`
 * when its handler ended; at most `maxConcurrentEvents` running handlers
 * (Overloaded beyond); `events.cancel` and the handler deadline abort a
 * handler's `ctx.signal`; ping answered at any time; stop after running
 * handlers completed; exit when stdin closes.
 * Resolves with the exit code after calling `exit`.
 *
 * @example
 * ```ts
 * import { PassThrough } from 'node:stream';
 * import { definePlugin, runStdio } from '@host/plugin-sdk-v2';
 *
 * const plugin = definePlugin({ pluginId: 'com.example.embedded', onMessage: (ctx) => ctx.reply('hi').then(() => undefined) });
 *
 * // Speak the protocol over other streams, e.g. inside a supervisor or a test.
 * const stdin = new PassThrough();
 * const stdout = new PassThrough();
 * void runStdio(plugin, { argv: ['node', 'plugin', '--host-stdio'], stdin, stdout, exit: (code) => console.error('exit', code) });
 * ```
 */
export function runStdio(plugin: Plugin, options: StdioOptions = {}): Promise<number> {
  const argv = options.argv ?? process.argv;
  const stderr = options.stderr ?? process.stderr;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  if (!isProtocolMode(argv)) {
    stderr.write(usage(plugin));
    exit(USAGE_EXIT_CODE);
    return Promise.resolve(USAGE_EXIT_CODE);
  }
  const frameWrite = options.stdout
    ? (chunk: Uint8Array, done: () => void) => options.stdout?.write(chunk, done)
    : (
        (write) => (chunk: Uint8Array, done: () => void) =>
          write(chunk, done)
      )(enterProtocolMode());
  return new StdioRuntime(plugin, options.stdin ?? process.stdin, frameWrite, stderr, exit).finished;
}

class StdioRuntime {
  readonly finished: Promise<number>;
  private resolveFinished!: (code: number) => void;
  private readonly limits: FrameLimits = { maxHeaderBytes: LIMITS.maxHeaderBytes, maxPayloadBytes: LIMITS.maxPayloadBytes };
  private readonly conn: RpcConnection;
  private readonly events: EventRunner;
  private readonly abort = new AbortController();
  private init: InitializeParams | undefined;
  private session: Session | undefined;
  private started = false;
  private stopping = false;
  private exiting = false;

  constructor(
    private readonly plugin: Plugin,
    stdin: NodeJS.ReadableStream,
    write: (chunk: Uint8Array, done: () => void) => unknown,
    private readonly stderr: NodeJS.WritableStream,
    private readonly exitProcess: (code: number) => void,
  ) {
    this.finished = new Promise((resolve) => (this.resolveFinished = resolve));
    this.conn = new RpcConnection(stdin, write, this.limits, {
      onRequest: (request) => this.onRequest(request),
      onClose: (error) => this.onClose(error),
    });
    this.events = new EventRunner(
      { plugin, conn: this.conn, io: this.io, complete: (eventId, completion) => this.complete(eventId, completion) },
      RuntimeLimitsSchema.parse({}),
    );
    stdin.resume?.();
  }

  private get timeout(): number {
    return this.init?.runtime.requestTimeoutMilliseconds ?? RUNTIME_DEFAULTS.requestTimeoutMilliseconds;
  }

  private readonly io: TransportIO = {
    kind: 'stdio',
    reply: (event, message, prepared) =>
      this.call(Methods.reply.method, { eventId: event.eventId, message }, prepared.target) as ReturnType<TransportIO['reply']>,
    // Inside a handler the send names its event (docs/protocol/v2.md 4.7), so the host ties it to that handling.
    send: (message, prepared, event) =>
      this.call(
        Methods.send.method,
        event ? { target: prepared.target, message, eventId: event.eventId } : { target: prepared.target, message },
        prepared.target,
      ) as ReturnType<TransportIO['send']>,
    log: (level, message, fields, eventId) => this.log(level, message, fields, eventId),
    uploadMedia: (bytes, contentType, options) => this.upload(bytes, contentType, options),
  };

  /** media.upload, then the bytes in chunks of at most the size the host names, in order, then media.finish. */
  private async upload(bytes: Uint8Array, contentType: string, options: MediaUploadOptions): Promise<UploadedMedia> {
    const begun = (await this.call(
      Methods.mediaUpload.method,
      { contentType, size: bytes.length, ...(options.fileName !== undefined ? { fileName: options.fileName } : {}) },
      undefined,
    )) as { uploadId: string; maxChunkBytes: number };
    const step = Math.max(1, Math.min(begun.maxChunkBytes, LIMITS.maxMediaChunkBytes));
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    for (let offset = 0; offset < view.length; offset += step) {
      const data = view.subarray(offset, offset + step).toString('base64');
      await this.call(Methods.mediaChunk.method, { uploadId: begun.uploadId, offset, data }, undefined);
    }
    return (await this.call(Methods.mediaFinish.method, { uploadId: begun.uploadId }, undefined)) as UploadedMedia;
  }

  /** A plugin-to-host request with the runtime token; host refusals become typed errors. */
  private async call(method: string, params: Record<string, unknown>, target: Target | undefined): Promise<unknown> {
    const token = this.requireToken(method);
    try {
      return await this.conn.request(method, { token, ...params }, this.timeout);
    } catch (error) {
      throw hostFailure(error, target);
    }
  }

  /**
   * events.completed: sent once per accepted event, not awaited (the handler's
   * slot is free once the frame is written). The host may answer
   * `recorded: false` (it stopped waiting); the plugin does nothing differently.
   */
  private complete(eventId: string, completion: EventCompletion): void {
    if (this.conn.isClosed) return;
    const params = { eventId, error: completion.error, durationMs: Math.round(completion.durationMs) };
    this.call(Methods.completed.method, params, undefined).catch((error: unknown) =>
      this.stderr.write(`[warn] events.completed for ${eventId} failed: ${error instanceof Error ? error.message : String(error)}\n`),
    );
  }

  private requireToken(method: string): string {
    if (!this.init) throw new PluginSdkError('SDK_NOT_INITIALIZED', `${method} cannot be sent before host.initialize.`);
    return this.init.token;
  }

  private log(level: LogLevel, message: string, fields?: Record<string, unknown>, eventId?: string): void {
    const line = `[${level}] ${message}${fields && Object.keys(fields).length ? ` ${safeJson(fields)}` : ''}\n`;
    if (!this.init || this.conn.isClosed) {
      this.stderr.write(line);
      return;
    }
    const params = { token: this.init.token, level, message, ...(fields ? { fields } : {}), ...(eventId ? { eventId } : {}) };
    this.conn.request(Methods.log.method, params, this.timeout).catch(() => this.stderr.write(line));
  }

  private onRequest(request: IncomingRequest): void {
    const { id, method } = request;
    if (method === Methods.initialize.method) return this.initialize(request);
    if (!this.init) {
      return this.conn.respondError(
        id,
        RpcErrorCode.NotInitialized,
        `${method} arrived before host.initialize; the plugin answers nothing else until the handshake.`,
      );
    }
    switch (method) {
      case Methods.message.method:
        return this.onEvent(request);
      case Methods.deliver.method:
        return this.onChatEvent(request);
      case Methods.cancel.method:
        return this.onCancel(request);
      case Methods.ping.method:
        return this.onPing(request);
      case Methods.stop.method:
        return void this.onStop(request);
      case Methods.settingsChanged.method:
        return void this.onSettingsChanged(request);
      default:
        return this.conn.respondError(id, RpcErrorCode.MethodNotFound, `method "${method}" is not part of protocol v2 for plugins`);
    }
  }

  private initialize({ id, params }: IncomingRequest): void {
    if (this.init)
      return this.conn.respondError(
        id,
        RpcErrorCode.AlreadyInitialized,
        'host.initialize was already answered; it is sent once per process.',
      );
    const parsed = validate(InitializeParamsSchema, params, 'params');
    if (!parsed.ok) {
      return this.conn.respondError(
        id,
        RpcErrorCode.InvalidParams,
        `host.initialize params are invalid: ${parsed.issues.map((i) => i.message).join('; ')}`,
        { issues: parsed.issues },
      );
    }
    const init = parsed.value;
    // A process that cannot serve this host answers with an error and exits (docs/protocol/v2.md 3.4).
    const refusal = !init.supportedProtocolVersions.includes(PROTOCOL_VERSION)
      ? `the host supports protocol versions [${init.supportedProtocolVersions.join(', ')}] but this plugin speaks ${PROTOCOL_VERSION}; update the host or rebuild the plugin with a matching SDK`
      : init.pluginId !== this.plugin.pluginId
        ? `host.initialize is for plugin "${init.pluginId}" but this process is plugin "${this.plugin.pluginId}"; make manifest.json and definePlugin() use the same pluginId, rebuild and reinstall`
        : interceptRefusal(this.plugin);
    if (refusal) {
      this.conn.respondError(id, RpcErrorCode.PluginError, refusal);
      this.stderr.write(`[error] ${refusal}\n`);
      return void this.shutdown(1, false);
    }
    this.init = init;
    this.limits.maxHeaderBytes = init.runtime.maxHeaderLength;
    this.limits.maxPayloadBytes = init.runtime.maxPayloadLength;
    this.session = {
      pluginId: this.plugin.pluginId,
      settings: Object.freeze({ ...init.settings }),
      directories: init.directories,
      permissions: this.plugin.manifest?.permissions,
      intercepts: this.plugin.definition.intercepts ?? false,
      signal: this.abort.signal,
    };
    this.events.initialize(init.runtime, this.session);
    const result: InitializeResult = {
      protocolVersion: PROTOCOL_VERSION,
      pluginId: this.plugin.pluginId,
      sdkName: SDK_NAME,
      sdkVersion: SDK_VERSION,
      // For the operator's information: the host-to-plugin methods this SDK answers.
      capabilities: METHOD_LIST.filter((m) => m.direction === 'hostToPlugin' && m !== Methods.initialize).map((m) => m.method),
      encoding: 'json',
    };
    this.conn.respond(id, result);
    void this.start();
  }

  /** onStart runs after the handshake answer, so it may already send; events wait for it. */
  private async start(): Promise<void> {
    const onStart = this.plugin.definition.onStart;
    try {
      if (onStart) await onStart(createLifecycleContext(this.io, this.session as Session));
    } catch (error) {
      this.log('error', `onStart failed, stopping: ${describe(error)}`);
      return this.shutdown(1, false);
    }
    this.started = true;
    this.events.resume();
  }

  private onEvent({ id, params }: IncomingRequest): void {
    if (this.stopping) return this.conn.respondError(id, RpcErrorCode.Stopping, 'the plugin is stopping and takes no new events');
    const parsed = validate(MessageEventSchema, params, 'event');
    if (!parsed.ok) {
      return this.conn.respondError(
        id,
        RpcErrorCode.InvalidParams,
        `events.message params are invalid: ${parsed.issues.map((i) => i.message).join('; ')}`,
        { issues: parsed.issues },
      );
    }
    this.events.message(id, parsed.value);
  }

  /** events.deliver: an event of another type, run through the same path as a message (docs/protocol/v2.md 4.11). */
  private onChatEvent({ id, params }: IncomingRequest): void {
    if (this.stopping) return this.conn.respondError(id, RpcErrorCode.Stopping, 'the plugin is stopping and takes no new events');
    const parsed = validate(ChatEventSchema, params, 'event');
    if (!parsed.ok) {
      return this.conn.respondError(
        id,
        RpcErrorCode.InvalidParams,
        `events.deliver params are invalid: ${parsed.issues.map((i) => i.message).join('; ')}`,
        { issues: parsed.issues },
      );
    }
    this.events.message(id, carrierOf(parsed.value));
  }

  /** events.cancel: answered at once (docs/protocol/v2.md 4.8). */
  private onCancel({ id, params }: IncomingRequest): void {
    const parsed = validate(CancelParamsSchema, params, 'params');
    if (!parsed.ok) {
      return this.conn.respondError(
        id,
        RpcErrorCode.InvalidParams,
        `events.cancel params are invalid: ${parsed.issues.map((i) => i.message).join('; ')}`,
        { issues: parsed.issues },
      );
    }
    this.conn.respond(id, { cancelled: this.events.cancel(parsed.value.eventId, parsed.value.reason) });
  }

  /**
   * settings.changed (docs/protocol/v2.md 4.10): onSettingsChanged sees the
   * new values first; only when it succeeds do they replace the old ones.
   */
  private async onSettingsChanged({ id, params }: IncomingRequest): Promise<void> {
    const parsed = validate(SettingsChangedParamsSchema, params, 'params');
    if (!parsed.ok) {
      return this.conn.respondError(
        id,
        RpcErrorCode.InvalidParams,
        `settings.changed params are invalid: ${parsed.issues.map((i) => i.message).join('; ')}`,
        { issues: parsed.issues },
      );
    }
    const session = this.session as Session;
    const previous = session.settings;
    const next = Object.freeze({ ...parsed.value.settings });
    const hook = this.plugin.definition.onSettingsChanged;
    if (hook) {
      try {
        await hook({ ...createLifecycleContext(this.io, session), settings: next }, previous);
      } catch (error) {
        this.log('error', `onSettingsChanged failed; keeping the previous settings: ${describe(error)}`);
        // The answer is the operator's to read (the admin app shows it as the refusal): the reason alone; the stack stays in the log.
        return this.conn.respondError(id, RpcErrorCode.PluginError, error instanceof Error ? error.message : String(error));
      }
    }
    session.settings = next;
    this.conn.respond(id, { applied: true });
  }

  private onPing({ id, params }: IncomingRequest): void {
    const parsed = PingParamsSchema.safeParse(params ?? {});
    const nonce = parsed.success ? parsed.data.nonce : undefined;
    this.conn.respond(id, {
      ...(nonce !== undefined ? { nonce } : {}),
      inFlightEvents: this.events.inFlight,
      queuedEvents: this.events.queued,
    });
  }

  /**
   * plugin.stop: answered at once (docs/protocol/v2.md 4.3); then queued
   * events are refused, every handler's signal is aborted, running handlers
   * finish (their replies and completions still go out), onStop runs, and
   * the process exits 0.
   */
  private async onStop({ id, params }: IncomingRequest): Promise<void> {
    const parsed = StopParamsSchema.safeParse(params ?? {});
    if (!parsed.success) return this.conn.respondError(id, RpcErrorCode.InvalidParams, 'plugin.stop params are invalid');
    this.conn.respond(id, { accepted: true });
    if (this.stopping) return;
    this.stopping = true;
    this.abort.abort(new Error(`plugin.stop (${parsed.data.reason})`));
    await this.events.drain();
    await this.runOnStop();
    await this.shutdown(0, false);
  }

  private async runOnStop(): Promise<void> {
    const onStop = this.plugin.definition.onStop;
    if (!onStop || !this.started || !this.session) return;
    try {
      await onStop(createLifecycleContext(this.io, this.session));
    } catch (error) {
      this.log('error', `onStop failed: ${describe(error)}`);
    }
  }

  /** stdin closed (the host is gone) or a framing error: no orphan process, exit promptly. */
  private onClose(error?: { code: string; message: string }): void {
    if (this.exiting) return;
    if (error) {
      this.stderr.write(`[error] the host stream broke (${error.code}): ${error.message}\n`);
    }
    this.abort.abort(new Error('host connection closed'));
    void this.shutdown(error ? 1 : 0, true);
  }

  private async shutdown(code: number, runStop: boolean): Promise<void> {
    if (this.exiting) return;
    this.exiting = true;
    this.stopping = true;
    void this.events.drain();
    if (runStop) {
      // The host is gone: exit promptly, giving onStop only a moment to release resources.
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([this.runOnStop(), new Promise((r) => (timer = setTimeout(r, ORPHAN_STOP_MILLISECONDS)))]);
      clearTimeout(timer);
    }
    await this.conn.flush();
    this.exitProcess(code);
    this.resolveFinished(code);
  }
}

/** Why a plugin that intercepts cannot run over stdio, when its manifest lacks messages.intercept. */
function interceptRefusal(plugin: Plugin): string | undefined {
  if (!plugin.definition.intercepts || !plugin.manifest || plugin.manifest.permissions.includes('messages.intercept')) return undefined;
  return new PluginSdkError(
    'SDK_INTERCEPT_PERMISSION_MISSING',
    `plugin "${plugin.pluginId}" sets intercepts: true but its manifest does not declare the "messages.intercept" permission, so the host would ignore every intercept`,
  ).message;
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return '[unserialisable fields]';
  }
}
