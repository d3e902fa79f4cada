import type { ProviderBody } from '@host/messages';
import type {
  ChatEventInput,
  CancelReason,
  CommandMatch,
  Conversation,
  ConversationType,
  EventAck,
  MessageEvent,
  MessageEventInput,
  MessageFormat,
  PluginError,
  Target,
  UserRef,
} from '@host/protocol';
import { ChatEventSchema, LIMITS, mediaTypeProblem, MessageEventSchema, RUNTIME_DEFAULTS } from '@host/protocol';
import { PluginMessageError } from '../errors';
import {
  createLifecycleContext,
  type LogLevel,
  type PluginDirectories,
  type SentMessage,
  type Session,
  type TransportIO,
  type UploadedMedia,
} from '../context';
import { resolveManifest, type ManifestSource, type Plugin, type PluginManifest } from '../define-plugin';
import { dispatchEvent } from '../dispatch';
import { carrierOf } from '../rich';
import { EventSignal } from '../event-signal';
import { matchCommand } from './command-match';

/** Options of createTestHost. */
export interface TestHostOptions {
  /** A manifest to route and check with, when the plugin was defined without one (or to test another). */
  manifest?: ManifestSource;
  /** Settings values (the manifest's defaults fill the gaps), as host.initialize would pass them. */
  settings?: Record<string, unknown>;
  /** Folders reported in `ctx.directories` (default: none). */
  directories?: PluginDirectories;
  /**
   * Aborts a handler's `ctx.signal` this long after its event was delivered,
   * as the stdio runtime does with `runtime.handlerDeadlineMilliseconds`
   * (default 300000, the protocol's default).
   */
  handlerDeadlineMilliseconds?: number;
}

/** A message a user writes, for `send()`. Everything but `text` has a realistic default. */
export interface TestMessage {
  text: string;
  /** A conversation type (default "group") or conversation fields. */
  conversation?: ConversationType | Partial<Conversation>;
  /** Fields of the sender (default: mentionId "test-user", displayName "Test User"). */
  sender?: Partial<UserRef>;
  /** Users mentioned in the message. */
  mentions?: UserRef[];
  /** Provider of the event (default "qqbot"). */
  source?: string;
  /** Seconds the reply window stays open (default 300; negative makes it already closed). */
  replyWindowSeconds?: number;
}

/** One message the plugin sent, as the host would deliver it. */
export interface TestReply {
  /** "reply" for ctx.reply/replyMarkdown, "send" for ctx.messages.* sends. */
  kind: 'reply' | 'send';
  target: Target;
  format: MessageFormat;
  /** Normalised parts (composites flattened, adjacent text merged). */
  parts: SentMessage['parts'];
  /** The provider body the host sends, e.g. `{msg_type: 2, markdown: {content}}` for QQ Bot. */
  body: ProviderBody;
  /** The rendered text: `markdown.content` or `content` of the body. */
  content: string;
}

/** A log line the plugin wrote with ctx.log. */
export interface TestLogEntry {
  level: LogLevel;
  message: string;
  fields?: Record<string, unknown>;
  /** The event of the handler that wrote the line, as `log.write` names it; absent outside a handler. */
  eventId?: string;
}

/** How the handler of an accepted event ended: what the stdio runtime reports with `events.completed`. */
export interface TestCompletion {
  /** null when the handler returned; else its error as the host records it (a HandlerError's code, or `plugin.handler_failed`). */
  error: PluginError | null;
  /** How long the handler ran, in milliseconds. */
  durationMs: number;
}

/** The outcome of one delivered event, once its handler ended. */
export interface TestDelivery {
  /** The event as the plugin received it. */
  event: MessageEvent;
  /** The command the host matched (also in `event.command`). */
  command: CommandMatch | undefined;
  /** False when the plugin's eventSubscriptions do not take the event (then nothing ran). */
  delivered: boolean;
  /**
   * The plugin's decision (the ACK of `events.message`): `accepted` (a handler
   * took the event) and `intercepted`. `error` is set only when an
   * intercepting handler threw before it decided (the event was declined).
   */
  ack: EventAck;
  /** How the handler ended (`events.completed`): null when the event was declined or not delivered. */
  completion: TestCompletion | null;
  /** Messages sent while handling this event, in order. */
  replies: TestReply[];
  /** Log lines written while handling this event. */
  logs: TestLogEntry[];
}

/**
 * A delivery under way. Await it for the TestDelivery once the handler ended;
 * its members show the decision apart from the work, as the host sees them.
 */
export interface TestDeliveryInProgress extends Promise<TestDelivery> {
  /**
   * Resolves with the decision as soon as the plugin made it: before the
   * handler runs for a plugin without `intercepts`; on `ctx.intercept()`,
   * `ctx.pass()` or the handler's end for one with it.
   */
  readonly ack: Promise<EventAck>;
  /** Resolves when the handler ended (null when the event was declined). */
  readonly completed: Promise<TestCompletion | null>;
  /** Messages sent so far for this event (filled as the handler sends). */
  readonly replies: readonly TestReply[];
  /** Log lines written so far for this event. */
  readonly logs: readonly TestLogEntry[];
  /**
   * Cancels the event as the host's `events.cancel` would: aborts the
   * handler's `ctx.signal` with a PluginSdkError `SDK_EVENT_CANCELLED`
   * (reason default "deadline"). Called before the handler started, the
   * handler starts with its signal already aborted. Returns false once the
   * handler ended, like `{cancelled: false}`.
   */
  cancel(reason?: CancelReason): boolean;
}

/** An in-memory host for unit tests. */
/** Where and by whom a test click happens. */
export interface TestClick {
  conversation?: { type: ConversationType; id: string };
  senderId?: string;
  buttonId?: string;
  botAccountId?: string;
  source?: string;
}

/** One upload the test host took: the bytes and what `ctx.uploadMedia` declared. */
export interface TestUpload {
  readonly bytes: Uint8Array;
  readonly contentType: string;
  readonly fileName?: string;
}

export interface TestHost {
  /**
   * Delivers a message as a user would write it: builds the event and
   * matches commands like the host. Await the result for the outcome after
   * the handler ended, or use its `ack` to see the decision first.
   */
  send(message: string | TestMessage): TestDeliveryInProgress;
  /** Delivers a complete event (validated with the protocol schema; defaults filled in); rejects when it is invalid. */
  deliver(event: MessageEventInput): TestDeliveryInProgress;
  /**
   * Delivers an event of another type (interaction.created, bot.added, bot.removed, conversation.opened) as
   * the host does with events.deliver: to the handler of its type, only when the manifest subscribes to it.
   */
  deliverEvent(event: ChatEventInput): TestDeliveryInProgress;
  /** A user clicks a callback button whose data is `data`: an interaction.created event in a group (by default). */
  click(data: string, options?: TestClick): TestDeliveryInProgress;
  /** Runs onStart (send and deliver do it on first use). */
  start(): Promise<void>;
  /** Aborts every handler's signal, waits for in-flight events to end, then runs onStop. */
  stop(): Promise<void>;
  /** Every message sent so far, including from onStart. */
  readonly sent: readonly TestReply[];
  /** Every log line so far. */
  readonly logs: readonly TestLogEntry[];
  /**
   * The media the plugin uploaded with `ctx.uploadMedia`, by media id, as the host keeps them: each checked
   * like the host checks it (an image type the host takes, bytes that match the declared type).
   */
  readonly uploads: ReadonlyMap<string, TestUpload>;
  /** The manifest used for routing and checks. */
  readonly manifest: PluginManifest | undefined;
}

const CONVERSATION_TARGET: Record<ConversationType, Target['type']> = { group: 'group', c2c: 'user', channel: 'channel', direct: 'direct' };

function bodyContent(body: ProviderBody): string {
  const markdown = (body as { markdown?: { content?: unknown } }).markdown;
  const content = markdown?.content ?? (body as { content?: unknown }).content;
  return typeof content === 'string' ? content : '';
}

function settingsFor(manifest: PluginManifest | undefined, given: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(manifest?.settings?.configSchema ?? {})) {
    if (field.defaultValue !== undefined) out[key] = field.defaultValue;
  }
  return { ...out, ...(given ?? {}) };
}

/**
 * An in-memory host: delivers events to the plugin through the SDK's own
 * dispatch code (the same as stdio and HTTP), matches commands like the real
 * host, checks and renders every reply with the host's rules, and records
 * what would be sent.
 *
 * @example
 * ```ts
 * import { definePlugin } from '@host/plugin-sdk-v2';
 * import { createTestHost } from '@host/plugin-sdk-v2/testing';
 *
 * const plugin = definePlugin({
 *   manifest: {
 *     pluginId: 'com.example.echo', name: 'Echo', version: '1.0.0', author: 'Example', protocolVersion: 2,
 *     permissions: ['messages.reply'], commands: [{ name: 'echo', prefixes: ['/'] }],
 *   },
 *   commands: {
 *     async echo(ctx) {
 *       await ctx.replyMarkdown(ctx.at.user(ctx.sender), ' ', ctx.args);
 *     },
 *   },
 * });
 *
 * async function check(): Promise<void> {
 *   const host = createTestHost(plugin);
 *   const { replies } = await host.send({ text: '/echo hi', sender: { mentionId: 'u1' } });
 *   console.assert(replies[0]?.content === '<qqbot-at-user id="u1" /> hi');
 *
 *   // The decision and the completion apart, as the host sees them over stdio.
 *   const delivery = host.send('/echo again');
 *   const ack = await delivery.ack; // sent before the handler ran: the plugin does not intercept
 *   console.assert(ack.accepted && !ack.intercepted);
 *   const completion = await delivery.completed;
 *   console.assert(completion?.error === null);
 * }
 * void check();
 * ```
 */
export function createTestHost(plugin: Plugin, options: TestHostOptions = {}): TestHost {
  const manifest = options.manifest ? resolveManifest(options.manifest) : plugin.manifest;
  const sent: TestReply[] = [];
  const logs: TestLogEntry[] = [];
  const abort = new AbortController();
  const session: Session = {
    pluginId: plugin.pluginId,
    settings: Object.freeze(settingsFor(manifest, options.settings)),
    directories: options.directories,
    permissions: manifest?.permissions,
    intercepts: plugin.definition.intercepts ?? false,
    signal: abort.signal,
  };
  let sequence = 0;
  let starting: Promise<void> | undefined;
  const inFlight = new Set<Promise<unknown>>();

  const record = (prepared: SentMessage, sink: TestReply[] | undefined) => {
    const reply: TestReply = {
      kind: prepared.kind,
      target: prepared.target,
      format: prepared.format,
      parts: prepared.parts,
      body: prepared.body,
      content: bodyContent(prepared.body),
    };
    sent.push(reply);
    sink?.push(reply);
    return { accepted: true, messageId: `sent-${sent.length}`, target: prepared.target };
  };
  const uploads = new Map<string, TestUpload>();
  // The host's checks of an upload (docs/protocol/v2.md 4.12), made on the whole bytes at once.
  const upload = async (bytes: Uint8Array, contentType: string, options: { fileName?: string }): Promise<UploadedMedia> => {
    if (bytes.length === 0) throw new PluginMessageError('message.media.upload_invalid', 'The upload has no bytes.', { fromHost: true });
    const problem = mediaTypeProblem(contentType, bytes.subarray(0, 16));
    if (problem) throw new PluginMessageError('message.media.type_mismatch', problem, { fromHost: true });
    const mediaId = `test-media-${String(uploads.size + 1).padStart(6, '0')}`;
    uploads.set(mediaId, {
      bytes: Uint8Array.from(bytes),
      contentType,
      ...(options.fileName !== undefined ? { fileName: options.fileName } : {}),
    });
    return { mediaId, contentType, size: bytes.length, expiresAt: new Date(Date.now() + LIMITS.mediaTtlMilliseconds).toISOString() };
  };
  const ioFor = (sink: { replies: TestReply[]; logs: TestLogEntry[] } | undefined): TransportIO => ({
    uploadMedia: upload,
    kind: 'test',
    reply: async (_event, _message, prepared) => record(prepared, sink?.replies),
    send: async (_message, prepared) => record(prepared, sink?.replies),
    log: (level, message, fields, eventId) => {
      const entry: TestLogEntry = { level, message, ...(fields ? { fields } : {}), ...(eventId ? { eventId } : {}) };
      logs.push(entry);
      sink?.logs.push(entry);
    },
  });

  const start = (): Promise<void> => {
    starting ??= (async () => {
      const onStart = plugin.definition.onStart;
      if (onStart) await onStart(createLifecycleContext(ioFor(undefined), session));
    })();
    return starting;
  };

  const subscribed = (event: MessageEvent): boolean =>
    !manifest ||
    manifest.eventSubscriptions.some(
      (s) =>
        s.eventType === event.eventType &&
        (!s.botAccountIds || s.botAccountIds.includes(event.bot.botAccountId)) &&
        (!s.conversationIds || s.conversationIds.includes(event.conversation.conversationId)),
    );

  const deliverWith = (input: MessageEventInput | ChatEventInput, parse: (input: unknown) => MessageEvent): TestDeliveryInProgress => {
    const sink = { replies: [] as TestReply[], logs: [] as TestLogEntry[] };
    const signal = new EventSignal(abort.signal);
    let eventId = typeof input === 'object' && input !== null && typeof input.eventId === 'string' ? input.eventId : 'test-event';
    let ended = false;
    let decide!: (ack: EventAck) => void;
    let fail!: (error: unknown) => void;
    const ack = new Promise<EventAck>((resolve, reject) => ((decide = resolve), (fail = reject)));
    const deadline = setTimeout(
      () => signal.cancel(eventId, 'deadline'),
      options.handlerDeadlineMilliseconds ?? RUNTIME_DEFAULTS.handlerDeadlineMilliseconds,
    );
    deadline.unref?.();
    async function run(): Promise<TestDelivery> {
      await start();
      const event = parse(input);
      eventId = event.eventId;
      if (!subscribed(event)) {
        const declined = { eventId: event.eventId, accepted: false, intercepted: false, error: null };
        decide(declined);
        return { event, command: event.command, delivered: false, ack: declined, completion: null, ...sink };
      }
      let decided: EventAck | undefined;
      const onAck = (value: EventAck) => {
        decided = value;
        decide(value);
      };
      const completion = await dispatchEvent(plugin, event, ioFor(sink), session, { signal: signal.signal, onAck });
      return { event, command: event.command, delivered: true, ack: decided as EventAck, completion, ...sink };
    }
    const running = (async (): Promise<TestDelivery> => {
      try {
        return await run();
      } finally {
        ended = true;
        clearTimeout(deadline);
        signal.dispose();
      }
    })();
    const settled = running.then(
      () => undefined,
      (error: unknown) => fail(error),
    );
    inFlight.add(settled);
    void settled.finally(() => inFlight.delete(settled));
    const completed = running.then((d) => d.completion);
    // Each is observed by whoever awaits it; an ignored one must not be an unhandled rejection.
    ack.catch(() => undefined);
    completed.catch(() => undefined);
    return Object.assign(running, {
      ack,
      completed,
      replies: sink.replies,
      logs: sink.logs,
      cancel(reason: CancelReason = 'deadline') {
        if (ended) return false;
        signal.cancel(eventId, reason);
        return true;
      },
    });
  };

  const send = (message: string | TestMessage): TestDeliveryInProgress => {
    const m: TestMessage = typeof message === 'string' ? { text: message } : message;
    const n = ++sequence;
    const given = typeof m.conversation === 'string' ? { type: m.conversation } : (m.conversation ?? {});
    const type = given.type ?? 'group';
    const conversation: Conversation = { conversationId: type === 'group' ? 'test-group' : `test-${type}`, ...given, type };
    const sender: UserRef = { provider: m.source ?? 'qqbot', mentionId: 'test-user', displayName: 'Test User', ...m.sender };
    const targetId = type === 'c2c' || type === 'direct' ? sender.mentionId : conversation.conversationId;
    const now = Date.now();
    const command = manifest ? matchCommand(m.text, manifest.commands, type) : undefined;
    return deliver({
      eventId: `test-event-${n}`,
      eventType: 'message.created',
      timestamp: new Date(now).toISOString(),
      source: m.source ?? 'qqbot',
      bot: { botAccountId: 'test-bot', platform: m.source ?? 'qqbot', displayName: 'Test Bot' },
      conversation,
      sender,
      message: { id: `test-message-${n}`, content: m.text, attachments: [], mentions: m.mentions ?? [] },
      messageReference: {
        messageId: `test-message-${n}`,
        targetType: CONVERSATION_TARGET[type],
        targetId,
        replyUntil: new Date(now + (m.replyWindowSeconds ?? 300) * 1000).toISOString(),
        restrictions: [],
      },
      ...(command ? { command } : {}),
    });
  };

  const deliver = (input: MessageEventInput): TestDeliveryInProgress => deliverWith(input, (i) => MessageEventSchema.parse(i));

  const deliverEvent = (input: ChatEventInput): TestDeliveryInProgress => deliverWith(input, (i) => carrierOf(ChatEventSchema.parse(i)));

  let clicks = 0;
  const click = (data: string, o: TestClick = {}): TestDeliveryInProgress => {
    const n = ++clicks;
    const type = o.conversation?.type ?? 'group';
    const targetId = o.conversation?.id ?? 'test-group';
    const senderId = o.senderId ?? 'test-user';
    return deliverEvent({
      eventId: `test-click-${n}`,
      eventType: 'interaction.created',
      timestamp: new Date().toISOString(),
      source: o.source ?? 'qqbot',
      bot: { botAccountId: o.botAccountId ?? 'test-bot', platform: o.source ?? 'qqbot' },
      conversation: { type, conversationId: targetId },
      sender: { provider: o.source ?? 'qqbot', mentionId: senderId },
      interaction: { id: `test-interaction-${n}`, data, ...(o.buttonId ? { buttonId: o.buttonId } : {}) },
      messageReference: {
        messageId: `event:test-interaction-${n}`,
        targetType: CONVERSATION_TARGET[type],
        targetId,
        replyUntil: new Date(Date.now() + 300_000).toISOString(),
        restrictions: [],
      },
    });
  };

  return {
    send,
    deliver,
    deliverEvent,
    click,
    start,
    async stop() {
      abort.abort(new Error('test host stopped'));
      await Promise.allSettled([...inFlight]);
      await start();
      const onStop = plugin.definition.onStop;
      if (onStop) await onStop(createLifecycleContext(ioFor(undefined), session));
    },
    get sent() {
      return sent;
    },
    get logs() {
      return logs;
    },
    uploads,
    manifest,
  };
}
