import { z } from 'zod';
import { NonBlankString, PluginId } from './common';
import { ChatEventSchema, EventAckSchema, MessageEventSchema, PluginErrorSchema } from './event';
import { LIMITS, PROTOCOL_VERSION, RUNTIME_DEFAULTS } from './limits';
import { OutgoingMessageSchema, SendResultSchema, TargetSchema } from './message';
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
} as const;

export type MethodKey = keyof typeof Methods;
export const METHOD_LIST: readonly MethodDescriptor[] = Object.values(Methods);

export function findMethod(name: string): MethodDescriptor | undefined {
  return METHOD_LIST.find((m) => m.method === name);
}
