import { z } from 'zod';
import { IsoTimestamp, NonBlankString, PluginId } from './common';
import { ChatEventSchema, EventAckSchema, MessageEventSchema, PluginErrorSchema } from './event';
import { LIMITS, PROTOCOL_VERSION, RUNTIME_DEFAULTS } from './limits';
import { MediaId, OutgoingMessageSchema, SendResultSchema, TargetSchema } from './message';
import type { Permission } from './permissions';

/**
 * One descriptor per JSON-RPC method: name, direction, params and result
 * schemas, and the permission a plugin-to-host call needs. The host and every
 * SDK import these; nothing else names a method.
 */
export interface MethodDescriptor<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  readonly method: string;
  readonly direction: 'hostToPlugin' | 'pluginToHost';
  readonly params: P;
  readonly result: R;
  /** Permission a plugin must declare to call it (plugin-to-host only). */
  readonly permission?: Permission;
  readonly summary: string;
}

function method<P extends z.ZodType, R extends z.ZodType>(d: MethodDescriptor<P, R>): MethodDescriptor<P, R> {
  return d;
}

export const RuntimeLimitsSchema = z
  .object({
    maxConcurrentEvents: z.number().int().min(1).default(RUNTIME_DEFAULTS.maxConcurrentEvents),
    queueCapacity: z.number().int().min(0).default(RUNTIME_DEFAULTS.queueCapacity),
    requestTimeoutMilliseconds: z.number().int().min(1).default(RUNTIME_DEFAULTS.requestTimeoutMilliseconds),
    handlerDeadlineMilliseconds: z
      .number()
      .int()
      .min(1)
      .default(RUNTIME_DEFAULTS.handlerDeadlineMilliseconds)
      .describe('How long one handler may run; the SDK aborts its cancellation signal when it passes.'),
    maxHeaderLength: z.number().int().min(1).default(LIMITS.maxHeaderBytes),
    maxPayloadLength: z.number().int().min(1).default(LIMITS.maxPayloadBytes),
  })
  .meta({ id: 'RuntimeLimits' });
export type RuntimeLimits = z.output<typeof RuntimeLimitsSchema>;

export const InitializeParamsSchema = z.object({
  supportedProtocolVersions: z.array(z.number().int()).min(1),
  instanceId: NonBlankString.describe('Identifies this process run; changes on every start.'),
  pluginId: PluginId,
  hostVersion: z.string(),
  directories: z.object({
    pluginDirectory: z.string(),
    pluginDataDirectory: z.string(),
    pluginConfigDirectory: z.string(),
    pluginCacheDirectory: z.string(),
  }),
  token: z.string().min(32).describe('Runtime token: put it in params.token of every plugin-to-host request. Dies with the process.'),
  encoding: z.literal('json'),
  runtime: RuntimeLimitsSchema.default(RuntimeLimitsSchema.parse({})),
  settings: z.record(z.string(), z.unknown()).default({}).describe('Current settings values (secrets included).'),
});
export type InitializeParams = z.output<typeof InitializeParamsSchema>;

export const InitializeResultSchema = z.object({
  protocolVersion: z.literal(PROTOCOL_VERSION),
  pluginId: PluginId,
  sdkName: NonBlankString,
  sdkVersion: NonBlankString,
  capabilities: z.array(z.string()).default([]),
  encoding: z.literal('json'),
});
export type InitializeResult = z.output<typeof InitializeResultSchema>;

export const StopParamsSchema = z.object({
  reason: z.enum(['operator', 'update', 'hostShutdown', 'restart', 'unhealthy']).default('operator'),
  graceMilliseconds: z.number().int().min(0).default(RUNTIME_DEFAULTS.stopGraceMilliseconds),
});
export const StopResultSchema = z.object({ accepted: z.literal(true) });

export const PingParamsSchema = z.object({ nonce: z.string().optional() });
export const PingResultSchema = z.object({
  nonce: z.string().optional(),
  inFlightEvents: z.number().int().min(0).default(0),
  queuedEvents: z.number().int().min(0).default(0),
});

const Token = z.string().min(1).describe('The runtime token from host.initialize.');

export const LogLevel = z.enum(['trace', 'debug', 'info', 'warn', 'error']);
export const LogWriteParamsSchema = z.object({
  token: Token,
  level: LogLevel,
  message: z.string(),
  fields: z.record(z.string(), z.unknown()).optional(),
  eventId: NonBlankString.optional().describe(
    'The event whose handler writes this line (the SDKs fill it in). The host keeps it with the line only when that event was delivered to this plugin, so the line can be found from the event; otherwise the line is kept without it.',
  ),
});
export const AcceptedResultSchema = z.object({ accepted: z.literal(true) });

export const ReplyParamsSchema = z.object({
  token: Token,
  eventId: NonBlankString.describe('The event being answered; the host resolves its messageReference.'),
  message: OutgoingMessageSchema,
});
/** Why the host cancelled an event it delivered. */
export const CancelReason = z.enum(['ackTimeout', 'deadline']);
export type CancelReason = z.infer<typeof CancelReason>;

export const CancelParamsSchema = z.object({
  eventId: NonBlankString,
  reason: CancelReason.describe('ackTimeout: no decision within the request timeout; deadline: the handler ran past its deadline.'),
});
export const CancelResultSchema = z.object({
  cancelled: z.boolean().describe('true when the event was queued or its handler was running and is now cancelled.'),
});

export const CompletedParamsSchema = z.object({
  token: Token,
  eventId: NonBlankString.describe('The event whose handler ended; sent once, after an ACK with accepted: true.'),
  error: PluginErrorSchema.nullable().default(null).describe('null when the handler succeeded, else what went wrong.'),
  durationMs: z.number().min(0).optional().describe('How long the handler ran, as the plugin measured it.'),
});
export const CompletedResultSchema = z.object({
  recorded: z.boolean().describe('false when the host no longer waits for this event (unknown, past its deadline, or reported twice).'),
});

export const SendParamsSchema = z.object({
  token: Token,
  target: TargetSchema,
  message: OutgoingMessageSchema,
  eventId: NonBlankString.optional().describe(
    'The event whose handler makes this send (the SDKs fill it in). The host uses it only when that event was delivered to this plugin: the default bot, the event log, and the once-only record of a cluster; otherwise it is ignored.',
  ),
});

const UploadId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{16,64}$/, { message: 'must be an upload id from media.upload' })
  .describe('The id media.upload gave.');

export const MediaUploadParamsSchema = z.object({
  token: Token,
  contentType: z
    .string()
    .max(127)
    .regex(/^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/, { message: 'must be a lowercase media type such as image/png' })
    .describe(
      'The media type of the bytes; image/png, image/jpeg, image/gif or image/webp for an image. The host checks it against the first bytes.',
    ),
  size: z
    .number()
    .int()
    .min(1)
    .describe(`The number of bytes that follow, at most ${LIMITS.maxMediaUploadBytes} (LIMITS.maxMediaUploadBytes).`),
  fileName: NonBlankString.max(255).optional().describe('The name a file part shows when it names none.'),
});
export const MediaUploadResultSchema = z.object({
  uploadId: UploadId,
  maxChunkBytes: z.number().int().min(1).describe('Most bytes one media.chunk may carry, decoded.'),
});

export const MediaChunkParamsSchema = z.object({
  token: Token,
  uploadId: UploadId,
  offset: z.number().int().min(0).describe('Where the chunk starts: the number of bytes sent before it.'),
  data: z.string().describe(`The bytes, base64 (RFC 4648, with padding); at most ${LIMITS.maxMediaChunkBytes} decoded.`),
});
export const MediaChunkResultSchema = z.object({
  received: z.number().int().min(0).describe('Bytes of the upload received so far.'),
});

export const MediaFinishParamsSchema = z.object({ token: Token, uploadId: UploadId });
export const MediaFinishResultSchema = z.object({
  mediaId: MediaId.describe('Put it in an image or file part as mediaId; only this plugin can use it.'),
  contentType: z.string(),
  size: z.number().int().min(1),
  expiresAt: IsoTimestamp.describe('When the host forgets the media id (LIMITS.mediaTtlMilliseconds after finishing).'),
});
export type MediaFinishResult = z.infer<typeof MediaFinishResultSchema>;

export const SettingsChangedParamsSchema = z.object({
  settings: z
    .record(z.string(), z.unknown())
    .describe('All current settings values after the change (secrets included), as host.initialize would send them now.'),
});
export const SettingsChangedResultSchema = z.object({
  applied: z.literal(true).describe('The plugin took the new values; handlers see them from now on.'),
});

export const Methods = {
  initialize: method({
    method: 'host.initialize',
    direction: 'hostToPlugin',
    params: InitializeParamsSchema,
    result: InitializeResultSchema,
    summary: 'Handshake: first request of every process; nothing else is valid before it.',
  }),
  message: method({
    method: 'events.message',
    direction: 'hostToPlugin',
    params: MessageEventSchema,
    result: EventAckSchema,
    summary: 'Delivers a message event; the ACK is the decision (taken? intercepted?), sent before the handler finishes.',
  }),
  deliver: method({
    method: 'events.deliver',
    direction: 'hostToPlugin',
    params: ChatEventSchema,
    result: EventAckSchema,
    summary:
      'Delivers an event of another type than message.created (a button click, the bot added or removed, a conversation opened), only of the types the plugin subscribes to; answered like events.message.',
  }),
  cancel: method({
    method: 'events.cancel',
    direction: 'hostToPlugin',
    params: CancelParamsSchema,
    result: CancelResultSchema,
    summary: 'Cancels a delivered event: its ACK timed out or its handler passed the deadline.',
  }),
  stop: method({
    method: 'plugin.stop',
    direction: 'hostToPlugin',
    params: StopParamsSchema,
    result: StopResultSchema,
    summary: 'Asks the plugin to finish in-flight events and exit.',
  }),
  ping: method({
    method: 'plugin.ping',
    direction: 'hostToPlugin',
    params: PingParamsSchema,
    result: PingResultSchema,
    summary: 'Liveness check; must be answered even while events are in flight.',
  }),
  settingsChanged: method({
    method: 'settings.changed',
    direction: 'hostToPlugin',
    params: SettingsChangedParamsSchema,
    result: SettingsChangedResultSchema,
    summary: 'Gives a running plugin its settings after an operator changed them; sent only to plugins that list it in capabilities.',
  }),
  log: method({
    method: 'log.write',
    direction: 'pluginToHost',
    params: LogWriteParamsSchema,
    result: AcceptedResultSchema,
    summary: 'Writes a line to the plugin log.',
  }),
  completed: method({
    method: 'events.completed',
    direction: 'pluginToHost',
    params: CompletedParamsSchema,
    result: CompletedResultSchema,
    summary: 'Reports that the handler of an accepted event ended, and how.',
  }),
  reply: method({
    method: 'messages.reply',
    direction: 'pluginToHost',
    params: ReplyParamsSchema,
    result: SendResultSchema,
    permission: 'messages.reply',
    summary: 'Replies to a delivered event in its conversation.',
  }),
  send: method({
    method: 'messages.send',
    direction: 'pluginToHost',
    params: SendParamsSchema,
    result: SendResultSchema,
    permission: 'messages.send',
    summary: 'Sends a message to a target.',
  }),
  mediaUpload: method({
    method: 'media.upload',
    direction: 'pluginToHost',
    params: MediaUploadParamsSchema,
    result: MediaUploadResultSchema,
    permission: 'media.upload',
    summary: 'Begins an upload of bytes for an image or file part: declares their content type and size; media.chunk sends them.',
  }),
  mediaChunk: method({
    method: 'media.chunk',
    direction: 'pluginToHost',
    params: MediaChunkParamsSchema,
    result: MediaChunkResultSchema,
    permission: 'media.upload',
    summary: 'Sends the next bytes of an upload, base64, in order.',
  }),
  mediaFinish: method({
    method: 'media.finish',
    direction: 'pluginToHost',
    params: MediaFinishParamsSchema,
    result: MediaFinishResultSchema,
    permission: 'media.upload',
    summary: 'Ends an upload: the host checks the bytes against the content type and answers the media id.',
  }),
} as const;

export type MethodKey = keyof typeof Methods;
export const METHOD_LIST: readonly MethodDescriptor[] = Object.values(Methods);

export function findMethod(name: string): MethodDescriptor | undefined {
  return METHOD_LIST.find((m) => m.method === name);
}
