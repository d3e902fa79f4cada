import { MENTION_ID_PATTERN } from '@host/messages';
import {
  ChatEventType,
  CommandMatchSchema,
  DELIVERY_STATES,
  EventType,
  LIMITS,
  MessageEventSchema,
  NonBlankString,
  TargetSchema,
} from '@host/protocol';
import { z } from 'zod';

// Where one delivery stands is the host's fact (@host/protocol), reported here.
export { DELIVERY_STATES, type DeliveryStateView } from '@host/protocol';

/** Longest text of a console message. */
export const MAX_CONSOLE_TEXT_CHARS = 4000;

const ConsoleConversationSchema = z.strictObject({
  type: z.enum(['group', 'c2c']),
  id: NonBlankString.max(128),
});
const ConsoleSenderSchema = z.strictObject({
  id: z.string().regex(MENTION_ID_PATTERN, { message: 'must be 1 to 128 letters, digits or _ . : @ -' }),
  displayName: z.string().max(64).optional(),
});
const WaitMsSchema = z
  .number()
  .int()
  .min(0)
  .optional()
  .describe('Collect replies this many milliseconds longer (at most the host limit, default 30000).');

/** Body of POST /console/messages. */
export const ConsoleMessageRequestSchema = z.strictObject({
  conversation: ConsoleConversationSchema,
  sender: ConsoleSenderSchema,
  text: z.string().max(MAX_CONSOLE_TEXT_CHARS),
  waitMs: WaitMsSchema,
});
export type ConsoleMessageRequest = z.infer<typeof ConsoleMessageRequestSchema>;

/** The click of POST /console/chat-events: what a callback button of a keyboard the plugin sent carries. */
export const ConsoleInteractionSchema = z.strictObject({
  data: z.string().min(1).max(LIMITS.maxButtonDataChars).describe("The button's callback data."),
  buttonId: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/, { message: 'must be 1 to 64 letters, digits or _ . : -' })
    .optional()
    .describe("The button's id."),
  messageId: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,128}$/, { message: 'must be 1 to 128 letters, digits or _ . : -' })
    .optional()
    .describe('The id of the console message that carried the keyboard.'),
});

/**
 * Body of POST /console/chat-events: an event other than a message in a console conversation, as the QQ Bot
 * provider makes it from the platform's (a button click, the bot added to or removed from the conversation, the
 * conversation opened again). `interaction` is required with `interaction.created` and refused with any other type.
 */
export const ConsoleChatEventRequestSchema = z
  .strictObject({
    eventType: ChatEventType,
    conversation: ConsoleConversationSchema,
    sender: ConsoleSenderSchema.describe('Who clicked, added or removed the bot, or opened the conversation.'),
    interaction: ConsoleInteractionSchema.optional(),
    waitMs: WaitMsSchema,
  })
  .superRefine((e, ctx) => {
    if (e.eventType === 'interaction.created' && !e.interaction)
      ctx.addIssue({ code: 'custom', path: ['interaction'], message: 'is required with eventType "interaction.created"' });
    if (e.eventType !== 'interaction.created' && e.interaction)
      ctx.addIssue({ code: 'custom', path: ['interaction'], message: 'goes only with eventType "interaction.created"' });
  });
export type ConsoleChatEventRequest = z.infer<typeof ConsoleChatEventRequestSchema>;

const CodeMessageSchema = z.object({ code: z.string(), message: z.string() });

export const CompletionSchema = z.object({
  at: z.string(),
  error: CodeMessageSchema.nullable().describe(
    'null when the handler succeeded; its own error, or delivery.deadline / delivery.interrupted.',
  ),
  durationMs: z.number().nullable(),
});

/** The answer to POST /console/messages. */
export const ConsoleMessageResponseSchema = z.object({
  eventId: z.string(),
  completed: z.boolean().describe('False when a handler was still running when the answer was sent.'),
  deliveries: z.array(
    z.object({
      pluginId: z.string(),
      state: z.enum(DELIVERY_STATES),
      accepted: z.boolean(),
      intercepted: z.boolean(),
      error: CodeMessageSchema.nullable(),
      completion: CompletionSchema.nullable(),
    }),
  ),
  outbound: z.array(
    z.object({
      pluginId: z.string(),
      target: TargetSchema,
      body: z.unknown().describe('Exactly what the provider received (for QQ Bot, its request body).'),
      messageId: z.string().optional().describe("The provider's id of the message sent (a click on its keyboard names it)."),
    }),
  ),
  refused: z
    .array(z.object({ pluginId: z.string(), target: TargetSchema, error: CodeMessageSchema }))
    .describe('Messages the host refused (rendering or permission), with the code the plugin got.'),
});
export type ConsoleMessageResponse = z.infer<typeof ConsoleMessageResponseSchema>;

/** A message a plugin sent, or tried to send, with the provider body it became. */
export const OutboundRecordSchema = z.object({
  pluginId: z.string(),
  kind: z.enum(['reply', 'send']),
  eventId: z.string().optional(),
  target: TargetSchema,
  body: z.unknown(),
  messageId: z.string().optional(),
  at: z.string(),
  error: CodeMessageSchema.nullable(),
});

/**
 * An event record as listed and streamed: everything but the provider's raw
 * payload. Fields the event log adds later are dropped by a parse, not refused.
 */
export const EventRecordSummarySchema = z.object({
  eventId: z.string(),
  source: z.string(),
  receivedAt: z.string(),
  routedAt: z.string().nullable().describe('When every recipient had decided or failed.'),
  completedAt: z.string().nullable().describe('When every delivery had reached a final state.'),
  event: MessageEventSchema.omit({ rawPayload: true }).extend({
    eventType: EventType,
    chatEvent: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'For an event of a type other than message.created: the event as the plugins got it (events.deliver), without its raw payload; the fields around it are its message-shaped copy the host routes.',
      ),
  }),
  recipients: z.array(z.string()).describe('The chosen plugins in delivery order.'),
  deliveries: z.array(
    z.object({
      pluginId: z.string(),
      transport: z.enum(['stdio-jsonrpc', 'http']),
      command: CommandMatchSchema.optional(),
      startedAt: z.string(),
      state: z.enum(DELIVERY_STATES),
      sent: z.boolean(),
      done: z.boolean(),
      accepted: z.boolean(),
      intercepted: z.boolean(),
      error: CodeMessageSchema.nullable(),
      notice: CodeMessageSchema.optional(),
      durationMs: z.number().nullable(),
      completion: CompletionSchema.nullable(),
    }),
  ),
  outbound: z.array(OutboundRecordSchema),
  interceptedBy: z.string().nullable(),
  replySequence: z.number().int(),
});
export type EventRecordSummary = z.infer<typeof EventRecordSummarySchema>;

/** Query of GET /console/events. */
export const ConsoleEventsQuerySchema = z.object({
  history: z.coerce
    .number()
    .int()
    .min(0)
    .default(0)
    .describe('First replay this many of the newest records (capped at the event log capacity).'),
});

/** The `data` of each Server-Sent Event of GET /console/events; the SSE `event` field repeats `type`. */
export const ConsoleStreamDataSchema = z.union([
  z.object({ type: z.enum(['event', 'delivery', 'outbound', 'routed', 'completed']), record: EventRecordSummarySchema }),
  z.object({ type: z.literal('send'), outbound: OutboundRecordSchema }),
]);
export type ConsoleStreamData = z.infer<typeof ConsoleStreamDataSchema>;

/** Query of GET /events. */
export const EventsQuerySchema = z.object({
  pluginId: z.string().optional().describe('Only events delivered to this plugin.'),
  limit: z.coerce.number().int().min(1).default(100).describe('At most this many records (capped at the event log capacity).'),
});

export const EventListResponseSchema = z.object({ events: z.array(EventRecordSummarySchema).describe('Newest first.') });
export type EventListResponse = z.infer<typeof EventListResponseSchema>;
