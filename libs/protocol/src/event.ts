import { z } from 'zod';
import { ConversationType, IsoTimestamp, NonBlankString } from './common';
import { TargetType } from './message';

/** A user as the provider knows them; `mentionId` is what a mention part takes. */
export const UserRefSchema = z
  .object({
    provider: z.string(),
    mentionId: NonBlankString,
    userOpenId: z.string().optional(),
    memberOpenId: z.string().optional(),
    unionOpenId: z.string().optional(),
    displayName: z.string().optional(),
  })
  .meta({ id: 'UserRef' });
export type UserRef = z.infer<typeof UserRefSchema>;

export const BotRefSchema = z
  .object({
    botAccountId: NonBlankString,
    platform: z.string(),
    externalBotId: z.string().optional(),
    displayName: z.string().optional(),
  })
  .meta({ id: 'BotRef' });

export const ConversationSchema = z
  .object({
    type: ConversationType,
    conversationId: NonBlankString,
    guildId: z.string().optional(),
    channelId: z.string().optional(),
    groupOpenId: z.string().optional(),
    c2cOpenId: z.string().optional(),
  })
  .meta({ id: 'Conversation' });
export type Conversation = z.infer<typeof ConversationSchema>;

export const AttachmentSchema = z
  .object({
    id: z.string(),
    contentType: z.string(),
    url: z.string().optional(),
    sizeBytes: z.number().int().min(0).optional(),
    fileName: z.string().optional(),
  })
  .meta({ id: 'Attachment' });

export const MessageReferenceSchema = z
  .object({
    messageId: NonBlankString,
    targetType: TargetType,
    targetId: NonBlankString,
    replyUntil: IsoTimestamp.optional().describe('After this instant the provider refuses passive replies.'),
    restrictions: z.array(z.string()).default([]),
  })
  .meta({ id: 'MessageReference' });
export type MessageReference = z.infer<typeof MessageReferenceSchema>;

/**
 * The command the host matched for this plugin (see "Routing" in the spec).
 * Absent when the plugin receives the event as an observer.
 */
export const CommandMatchSchema = z
  .object({
    name: z.string().describe('The command name from the manifest (also when an alias matched).'),
    word: z.string().describe('The word the user typed: the name or one of the aliases.'),
    prefix: z.string(),
    args: z.string().describe('The text after the command word, leading whitespace removed.'),
  })
  .meta({ id: 'CommandMatch' });
export type CommandMatch = z.infer<typeof CommandMatchSchema>;

/**
 * The message event envelope. The same object is the params of stdio
 * `events.message` and the body of HTTP `POST /host/plugin/events/message`,
 * so one handler works on both transports. Objects are open (unknown fields
 * ignored) so the host may add fields in a minor release.
 */
export const MessageEventSchema = z
  .object({
    eventId: NonBlankString,
    eventType: z.literal('message.created'),
    timestamp: IsoTimestamp,
    source: z.string().describe('Provider that produced the event: qqbot, console, ...'),
    bot: BotRefSchema,
    conversation: ConversationSchema,
    sender: UserRefSchema,
    message: z.object({
      id: NonBlankString,
      content: z.string(),
      attachments: z.array(AttachmentSchema).default([]),
      mentions: z.array(UserRefSchema).default([]),
    }),
    messageReference: MessageReferenceSchema,
    command: CommandMatchSchema.optional(),
    rawPayload: z.unknown().optional(),
  })
  .meta({ id: 'MessageEvent' });
export type MessageEvent = z.output<typeof MessageEventSchema>;
export type MessageEventInput = z.input<typeof MessageEventSchema>;
/** The contract's name for the HTTP event body. */
export type ModernPluginMessageEvent = MessageEvent;

/** Error a plugin reports for one event (ACK or HTTP response). */
export const PluginErrorSchema = z
  .object({
    code: z.string().min(1).max(100).describe('A stable code of the plugin, e.g. "weather.api_unavailable".'),
    message: z.string().max(2000),
    details: z.unknown().optional(),
  })
  .meta({ id: 'PluginError' });
export type PluginError = z.infer<typeof PluginErrorSchema>;

/**
 * Result of stdio `events.message`: the plugin's decision, sent as soon as it
 * is known, not when the handler ends. `accepted: true` promises exactly one
 * `events.completed` later. Replies are separate calls, never part of the ACK.
 */
export const EventAckSchema = z
  .object({
    eventId: NonBlankString,
    accepted: z.boolean().describe('true: a handler takes the event and events.completed follows; false: declined, nothing follows.'),
    intercepted: z
      .boolean()
      .default(false)
      .describe('true stops delivery to the plugins after this one; honoured only with the messages.intercept permission.'),
    error: PluginErrorSchema.nullable().default(null).describe('Why a declined event was declined, when that was a failure.'),
  })
  .meta({ id: 'EventAck' });
export type EventAck = z.output<typeof EventAckSchema>;
