import type {
  CommandMatch,
  InitializeParams,
  MediaFinishResult,
  MessageEvent,
  MessageFormat,
  OutgoingMessage,
  SendResult,
  Target,
  TextPart,
  UserRef,
} from '@host/protocol';
import { LIMITS } from '@host/protocol';
import type { NormalizedMessage, ProviderBody } from '@host/messages';
import { PluginMessageError, PluginSdkError } from './errors';
import { at, literal, type PartInput } from './parts';
import { prepareMessage, providerFor } from './outgoing';
import { KeyboardBuilder } from './rich';

/** Which transport runs the plugin. */
export type TransportKind = 'stdio' | 'http' | 'test';

/** Folders the host gives a stdio plugin (absent over HTTP). */
export type PluginDirectories = InitializeParams['directories'];

/** Log levels of `log.write`. */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

/**
 * Writes to the plugin's log in the host (stdio: the `log.write` call; HTTP:
 * stderr of the service). Never blocks and never throws. The logger of a
 * handler's context names the handler's event in every line (`log.write`
 * eventId), so the host shows the line with that event; the plugin's own
 * logger (onStart, onStop, a timer) names none.
 */
export interface PluginLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Sends to one target in text format. */
export interface TextSender {
  readonly target: Target;
  /** Sends a text message; needs the `messages.send` permission. */
  send(...parts: PartInput[]): Promise<SendResult>;
}

/** Sends to a group: text or Markdown. */
export interface GroupSender extends TextSender {
  /** Sends a Markdown message; mentions render as provider tags. */
  sendMarkdown(...parts: PartInput[]): Promise<SendResult>;
}

/**
 * Messages the plugin starts itself (not replies): `messages.group(id).send(...)`.
 * Each needs the `messages.send` permission; over HTTP only while handling an event.
 * Inside a message handler they are sent by the bot that received the event;
 * name another with `to({ type, id, botAccountId })`. Outside a handler (onStart,
 * a timer) a host with several bots needs `botAccountId` (`message.target.bot_required`).
 */
export interface MessageSender {
  group(id: string): GroupSender;
  channel(id: string): TextSender;
  /** A one-to-one chat with a user (QQ c2c). */
  user(id: string): TextSender;
  direct(id: string): TextSender;
  /** Any target; Markdown to a target other than a group throws `message.format.unsupported_target`. */
  to(target: Target): GroupSender;
}

/** What `ctx.uploadMedia` answers (media.finish): the id to put in an image or file part, until `expiresAt`. */
export type UploadedMedia = MediaFinishResult;

/** Options of `ctx.uploadMedia`. */
export interface MediaUploadOptions {
  /** The name a file part shows when it names none. */
  fileName?: string;
}

/** What onStart and onStop receive. */
export interface LifecycleContext {
  readonly pluginId: string;
  readonly transport: TransportKind;
  /**
   * Settings values from the host (stdio) or from the handler options (HTTP).
   * On stdio they change while the plugin runs when an operator saves new
   * ones: read them when needed rather than copying them in onStart, or
   * react in `onSettingsChanged`.
   */
  readonly settings: Readonly<Record<string, unknown>>;
  readonly directories: PluginDirectories | undefined;
  readonly log: PluginLogger;
  readonly messages: MessageSender;
  /**
   * Uploads bytes to the host for an image or file part (docs/protocol/v2.md 4.12): stdio only, with the
   * `media.upload` permission. The SDK sends them in chunks (media.upload, media.chunk, media.finish); the host
   * checks the size (at most 10 MiB), the rate (20 uploads a minute) and that the bytes are what `contentType`
   * says (PNG, JPEG, GIF or WebP for an image). Put the answer's `mediaId` in a part with `image.fromMedia` or
   * `file.fromMedia`; it is usable by this plugin for an hour.
   *
   * @throws PluginMessageError `message.media.*` when the host refuses the upload, `message.permission.denied`
   *   without the permission; PluginSdkError SDK_UPLOAD_UNAVAILABLE over HTTP
   * @example
   * ```ts
   * import { readFile } from 'node:fs/promises';
   * import { definePlugin, image } from '@host/plugin-sdk-v2';
   *
   * export default definePlugin({
   *   pluginId: 'com.example.chart',
   *   async onMessage(ctx) {
   *     const chart = await ctx.uploadMedia(await readFile('chart.png'), 'image/png');
   *     await ctx.reply('today: ', image.fromMedia(chart, { alt: 'a chart' }));
   *   },
   * });
   * ```
   */
  uploadMedia(bytes: Uint8Array, contentType: string, options?: MediaUploadOptions): Promise<UploadedMedia>;
  /**
   * Aborted when the plugin is stopping or lost its host. In a message
   * handler, the event's own signal: see MessageContext.signal.
   */
  readonly signal: AbortSignal;
}

/**
 * What a message or command handler receives.
 *
 * @example
 * ```ts
 * import { definePlugin } from '@host/plugin-sdk-v2';
 *
 * export default definePlugin({
 *   pluginId: 'com.example.hello',
 *   async onMessage(ctx) {
 *     if (ctx.text.trim() === 'hello') {
 *       ctx.log.info('greeting', { sender: ctx.sender.mentionId });
 *       await ctx.reply('Hello, ', ctx.at.user(ctx.sender), '!');
 *     }
 *   },
 * });
 * ```
 */
export interface MessageContext extends LifecycleContext {
  /** The message event, exactly as the host sent it. */
  readonly event: MessageEvent;
  /**
   * The message event, as `event`.
   *
   * @deprecated Use `ctx.event`: the same message event.
   */
  readonly message: MessageEvent;
  /** The message's text as the user wrote it (`event.message.content`). */
  readonly text: string;
  /**
   * The text after the matched command word, leading whitespace removed, as the host matched it
   * (`event.command.args`); `''` when no command matched.
   */
  readonly args: string;
  /** The user who wrote the message (`event.sender`). */
  readonly sender: UserRef;
  /** The command the host matched, with `args` (text after the command word); undefined when none matched. */
  readonly command: CommandMatch | undefined;
  /** Mention builders: `at.user(sender)`, `at.users(a, b)`, `at.everyone()`. */
  readonly at: typeof at;
  /** Text shown as written: in Markdown its Markdown syntax is escaped (for text from users). */
  literal(value: string): TextPart;
  /**
   * Replies in the event's conversation in text format. Resolves when the
   * host accepted it (stdio) or when it was added to the response (HTTP).
   * Throws PluginMessageError when the message breaks a rule.
   */
  reply(...parts: PartInput[]): Promise<SendResult>;
  /**
   * Replies in Markdown: only in groups (`message.format.unsupported_target`
   * otherwise). Mentions become provider tags; text stays escaped. A
   * `keyboard()` among the arguments goes under the message as buttons.
   */
  replyMarkdown(...parts: (PartInput | KeyboardBuilder)[]): Promise<SendResult>;
  /**
   * Decides to intercept the event: the plugins after this one do not
   * receive it. Needs `intercepts: true` in definePlugin (and, on stdio, the
   * `messages.intercept` permission in the manifest). On stdio the decision
   * (the ACK) goes to the host at once and the handler keeps running; over
   * HTTP it is part of the response. Calling it after `pass()` throws
   * `SDK_DECISION_CONFLICT`; calling it twice is harmless.
   */
  intercept(): void;
  /**
   * Decides to let the event go on to the plugins after this one, as early
   * as the handler knows it, so the host does not wait for the handler to
   * end. A plugin without `intercepts` has already passed (it cannot
   * intercept) and may call it anyway. Calling it after `intercept()` throws
   * `SDK_DECISION_CONFLICT`.
   */
  pass(): void;
  /**
   * The event's cancellation signal. On stdio (and in the test host) it is
   * aborted when the host cancels the event (`events.cancel`), when the
   * handler deadline (`runtime.handlerDeadlineMilliseconds`, 5 minutes by
   * default) passes since the event arrived, or when the plugin stops or
   * loses its host; over HTTP when the service closes. `signal.reason` is a PluginSdkError
   * `SDK_EVENT_CANCELLED` for a cancel or deadline. Pass it to `fetch` and
   * other slow work, and return soon after it aborts: the host has stopped
   * waiting for this handler.
   */
  readonly signal: AbortSignal;
}

/** The transport side of the SDK: how a prepared message leaves the process. */
export interface TransportIO {
  readonly kind: TransportKind;
  reply(event: MessageEvent, message: OutgoingMessage, prepared: SentMessage): Promise<SendResult>;
  send(message: OutgoingMessage, prepared: SentMessage, event: MessageEvent | undefined): Promise<SendResult>;
  /** `eventId`: the event whose handler writes the line (absent outside a handler). */
  log(level: LogLevel, message: string, fields?: Record<string, unknown>, eventId?: string): void;
  /** media.upload, media.chunk and media.finish; absent where the transport cannot call the host (HTTP). */
  uploadMedia?(bytes: Uint8Array, contentType: string, options: MediaUploadOptions): Promise<UploadedMedia>;
}

/** A message as it leaves the plugin: normalised parts, target and the provider body the host will send. */
export interface SentMessage {
  readonly kind: 'reply' | 'send';
  readonly target: Target;
  readonly format: MessageFormat;
  readonly parts: NormalizedMessage['parts'];
  readonly body: ProviderBody;
}

/** What a runtime knows about the running plugin, shared by all its contexts. */
export interface Session {
  readonly pluginId: string;
  /** Replaced as a whole when the host sends changed settings (stdio `settings.changed`). */
  settings: Readonly<Record<string, unknown>>;
  readonly directories: PluginDirectories | undefined;
  /** Declared permissions, when the manifest is known (enables early checks). */
  readonly permissions: readonly string[] | undefined;
  readonly intercepts: boolean;
  readonly signal: AbortSignal;
}

/**
 * A message or command handler. It may keep running after the event's
 * decision was sent (stdio); its end is reported as the event's completion.
 */
export type MessageHandler = (ctx: MessageContext) => void | Promise<void>;

/**
 * A promise that knows whether anyone subscribed to it (`await`, `then`,
 * `catch`): `await` on a subclass instance goes through its `then`.
 */
class ObservedPromise<T> extends Promise<T> {
  observed = false;

  static override get [Symbol.species](): PromiseConstructor {
    return Promise;
  }

  override then<R1 = T, R2 = never>(
    onFulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onRejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    this.observed = true;
    return super.then(onFulfilled, onRejected);
  }
}

/** The reply target of an event: where its messageReference points. */
export function replyTarget(event: MessageEvent): Target {
  return { type: event.messageReference.targetType, id: event.messageReference.targetId };
}

/** A logger whose lines name `eventId`, the event of the handler it is given to (none outside a handler). */
function makeLogger(io: TransportIO, eventId?: string): PluginLogger {
  const write = (level: LogLevel) => (message: string, fields?: Record<string, unknown>) =>
    eventId === undefined ? io.log(level, String(message), fields) : io.log(level, String(message), fields, eventId);
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

/**
 * The target a send goes to: inside a handler, one that names no bot is sent
 * by the bot that received the event (docs/protocol/v2.md 4.7).
 */
export function withBot(target: Target, event: MessageEvent | undefined): Target {
  if (!event || target === null || typeof target !== 'object' || target.botAccountId !== undefined) return target;
  return { ...target, botAccountId: event.bot.botAccountId };
}

/** Sends on behalf of one session; `event` is set inside a handler. */
function makeSender(
  io: TransportIO,
  session: Session,
  track: <T>(p: Promise<T>) => Promise<T>,
  event: MessageEvent | undefined,
): MessageSender {
  const send = (target: Target, format: MessageFormat, parts: PartInput[]): Promise<SendResult> =>
    track(
      (async () => {
        const prepared = prepareMessage({
          format,
          parts,
          target: withBot(target, event),
          provider: providerFor(event?.source),
          permissions: session.permissions,
          need: 'messages.send',
        });
        const message = { format, parts: prepared.message.parts };
        return io.send(
          message,
          { kind: 'send', target: prepared.target, format, parts: prepared.message.parts, body: prepared.body },
          event,
        );
      })(),
    );
  const to = (target: Target): GroupSender => ({
    target,
    send: (...parts) => send(target, 'text', parts),
    sendMarkdown: (...parts) => send(target, 'markdown', parts),
  });
  const textOnly = (target: Target): TextSender => ({ target, send: (...parts) => send(target, 'text', parts) });
  return {
    group: (id) => to({ type: 'group', id }),
    channel: (id) => textOnly({ type: 'channel', id }),
    user: (id) => textOnly({ type: 'user', id }),
    direct: (id) => textOnly({ type: 'direct', id }),
    to,
  };
}

/** ctx.uploadMedia: the checks the SDK can make before any byte leaves, then the transport's upload. */
function makeUploader(io: TransportIO, session: Session, track: <T>(p: Promise<T>) => Promise<T>): LifecycleContext['uploadMedia'] {
  return (bytes, contentType, options = {}) =>
    track(
      (async () => {
        if (!io.uploadMedia) {
          throw new PluginSdkError('SDK_UPLOAD_UNAVAILABLE', 'Send the image or file by URL (image.fromUrl, file.fromUrl).');
        }
        if (session.permissions && !session.permissions.includes('media.upload')) {
          throw new PluginMessageError(
            'message.permission.denied',
            'uploadMedia needs the permission "media.upload"; declare it in the manifest and reinstall.',
          );
        }
        if (!(bytes instanceof Uint8Array)) throw new TypeError('uploadMedia takes the bytes as a Uint8Array or Buffer.');
        if (bytes.length > LIMITS.maxMediaUploadBytes) {
          throw new PluginMessageError(
            'message.media.too_large',
            `The upload has ${bytes.length} bytes; the host takes at most ${LIMITS.maxMediaUploadBytes}. Send a smaller file, or serve it from a URL.`,
          );
        }
        return io.uploadMedia(bytes, contentType, options);
      })(),
    );
}

/** The context of onStart/onStop. */
export function createLifecycleContext(io: TransportIO, session: Session): LifecycleContext {
  return {
    pluginId: session.pluginId,
    transport: io.kind,
    get settings() {
      return session.settings;
    },
    directories: session.directories,
    log: makeLogger(io),
    messages: makeSender(io, session, (p) => p, undefined),
    uploadMedia: makeUploader(io, session, (p) => p),
    signal: session.signal,
  };
}

/** What one event's context needs besides the event: its signal and where its decision goes. */
export interface MessageContextOptions {
  /** The event's own cancellation signal (default: the session's). */
  readonly signal?: AbortSignal;
  /** Called once, synchronously, when the handler calls intercept() (true) or pass() (false). */
  readonly onDecision?: (intercepted: boolean) => void;
}

/**
 * Builds the context of one event. `settle()` waits for every message the
 * handler started (awaited or not) so the runtime can report completion after them.
 */
export function createMessageContext(
  event: MessageEvent,
  io: TransportIO,
  session: Session,
  options: MessageContextOptions = {},
): { ctx: MessageContext; settle(): Promise<void>; decision(): boolean | undefined } {
  const pending = new Set<Promise<unknown>>();
  const log = makeLogger(io, event.eventId);
  const track = <T>(p: Promise<T>): Promise<T> => {
    const tracked = new ObservedPromise<T>((resolve, reject) => void p.then(resolve, reject));
    // A message the handler never awaited must not crash the process with an
    // unhandled rejection; its failure is logged instead. One the handler did
    // await is the handler's to handle (and reaches the ACK if it rethrows).
    const watched = Promise.prototype.then.call(tracked, undefined, (error: unknown) => {
      if (!tracked.observed)
        log.warn(`a message the handler did not await failed: ${error instanceof Error ? error.message : String(error)}`);
    });
    pending.add(watched);
    void watched.finally(() => pending.delete(watched));
    return tracked;
  };
  let decision: boolean | undefined;
  const decide = (intercepted: boolean) => {
    if (decision === intercepted) return;
    if (decision !== undefined) {
      throw new PluginSdkError(
        'SDK_DECISION_CONFLICT',
        `ctx.${intercepted ? 'intercept' : 'pass'}() was called after ctx.${decision ? 'intercept' : 'pass'}() for event ${event.eventId}; decide once.`,
      );
    }
    decision = intercepted;
    options.onDecision?.(intercepted);
  };
  const reply = (format: MessageFormat, args: (PartInput | KeyboardBuilder)[]): Promise<SendResult> =>
    track(
      (async () => {
        const target = replyTarget(event);
        if (event.messageReference.messageId === '') {
          throw new PluginMessageError(
            'message.reference.unavailable',
            `Event ${event.eventId} (${event.eventType}) takes no reply: the provider gave nothing to answer it with.`,
            { target },
          );
        }
        const keyboards = args.filter((a): a is KeyboardBuilder => a instanceof KeyboardBuilder);
        const parts = args.filter((a): a is PartInput => !(a instanceof KeyboardBuilder));
        const keyboard = keyboards.length > 0 ? keyboards[keyboards.length - 1]!.build() : undefined;
        const until = event.messageReference.replyUntil;
        if (until !== undefined && Date.parse(until) < Date.now()) {
          throw new PluginMessageError(
            'message.reference.expired',
            `The reply window of this message closed at ${until}. Reply sooner, or send a new message with ctx.messages.${target.type}("${target.id}").send(...) (needs messages.send).`,
            { target },
          );
        }
        const prepared = prepareMessage({
          format,
          parts,
          ...(keyboard ? { keyboard } : {}),
          target,
          provider: providerFor(event.source),
          permissions: session.permissions,
          need: 'messages.reply',
        });
        const message = {
          format,
          parts: prepared.message.parts,
          ...(prepared.message.keyboard ? { keyboard: prepared.message.keyboard } : {}),
        };
        return io.reply(event, message, {
          kind: 'reply',
          target: prepared.target,
          format,
          parts: prepared.message.parts,
          body: prepared.body,
        });
      })(),
    );
  const ctx: MessageContext = {
    pluginId: session.pluginId,
    transport: io.kind,
    get settings() {
      return session.settings;
    },
    directories: session.directories,
    log,
    messages: makeSender(io, session, track, event),
    uploadMedia: makeUploader(io, session, track),
    signal: options.signal ?? session.signal,
    event,
    message: event,
    text: event.message.content,
    args: event.command?.args ?? '',
    sender: event.sender,
    command: event.command,
    at,
    literal,
    reply: (...parts) => reply('text', parts),
    replyMarkdown: (...parts) => reply('markdown', parts),
    intercept() {
      if (!session.intercepts) throw new PluginSdkError('SDK_INTERCEPT_UNDECLARED', 'Add `intercepts: true` to definePlugin({...}).');
      decide(true);
    },
    pass() {
      // A plugin that cannot intercept decided on admission; passing is what it did.
      if (session.intercepts) decide(false);
    },
  };
  return {
    ctx,
    async settle() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
    decision: () => decision,
  };
}
