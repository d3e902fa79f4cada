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

/** What an incoming attachment is, from its content type: image/*, audio/*, video/*, anything else a file. */
export const AttachmentKind = z.enum(['image', 'audio', 'video', 'file']);
export type AttachmentKind = z.infer<typeof AttachmentKind>;

export const AttachmentSchema = z
  .object({
    id: z.string(),
    contentType: z.string(),
    kind: AttachmentKind.optional().describe('The host always sets it; absent only from a host older than this field.'),
    url: z.string().optional(),
    sizeBytes: z.number().int().min(0).optional(),
    fileName: z.string().optional(),
    width: z.number().int().min(0).optional().describe('Pixels, for an image or video when the provider says.'),
    height: z.number().int().min(0).optional().describe('Pixels, for an image or video when the provider says.'),
  })
  .meta({ id: 'Attachment' });
export type Attachment = z.infer<typeof AttachmentSchema>;

/** The kind of an attachment from its MIME content type (parameters and case ignored). */
export function attachmentKind(contentType: string): AttachmentKind {
  const major = contentType.trim().toLowerCase().split('/')[0];
  return major === 'image' || major === 'audio' || major === 'video' ? major : 'file';
}

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

/** Fields every event of `events.deliver` has, as the message event has them. */
const envelopeShape = {
  eventId: NonBlankString,
  timestamp: IsoTimestamp,
  source: z.string().describe('Provider that produced the event: qqbot, console, ...'),
  bot: BotRefSchema,
  conversation: ConversationSchema,
  rawPayload: z.unknown().optional(),
};

/** A click on a callback button of a keyboard the plugin sent. */
export const InteractionSchema = z
  .object({
    id: NonBlankString.describe("The provider's id of the click (QQ Bot: the INTERACTION_CREATE id; the host acknowledges it)."),
    data: z.string().describe('The callback data of the button (ButtonAction "callback" data).'),
    buttonId: z.string().optional().describe('The id of the button, when the provider says.'),
    messageId: z.string().optional().describe("The provider's id of the message that carried the keyboard, when it says."),
  })
  .meta({ id: 'Interaction' });
export type Interaction = z.infer<typeof InteractionSchema>;

/** The event types of `events.deliver`: every type but `message.created`. */
export const ChatEventType = z.enum(['interaction.created', 'bot.added', 'bot.removed', 'conversation.opened']);
export type ChatEventType = z.infer<typeof ChatEventType>;

/**
 * Every event type other than `message.created`: the params of stdio `events.deliver` and the body of HTTP
 * `POST /host/plugin/events/deliver`. One object for every type, told apart by `eventType`, so every SDK
 * decodes it as one type (docs/protocol/v2.md 5.4 says which fields each type has). The host sends a plugin
 * only the types its manifest subscribes to, so a plugin that subscribes to `message.created` alone never
 * sees this method (the growth rule of the spec).
 */
export const ChatEventSchema = z
  .object({
    ...envelopeShape,
    eventType: ChatEventType,
    sender: UserRefSchema.optional().describe(
      'Who clicked (interaction.created, always), added or removed the bot, or opened the conversation, when known.',
    ),
    interaction: InteractionSchema.optional().describe('The click; present exactly in interaction.created.'),
    messageReference: MessageReferenceSchema.optional().describe(
      'Where a reply goes: always in interaction.created, when the provider allows one in bot.added and conversation.opened, never in bot.removed.',
    ),
  })
  .meta({ id: 'ChatEvent' })
  .superRefine((e, ctx) => {
    if (e.eventType !== 'interaction.created') return;
    for (const field of ['sender', 'interaction', 'messageReference'] as const) {
      if (e[field] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: `is required in an interaction.created event` });
    }
  });
export type ChatEvent = z.output<typeof ChatEventSchema>;
export type ChatEventInput = z.input<typeof ChatEventSchema>;
/** A chat event of one type, with the fields that type always has. */
export type InteractionEvent = ChatEvent & {
  eventType: 'interaction.created';
  sender: UserRef;
  interaction: Interaction;
  messageReference: MessageReference;
};
export type BotAddedEvent = ChatEvent & { eventType: 'bot.added' };
export type BotRemovedEvent = ChatEvent & { eventType: 'bot.removed' };
export type ConversationOpenedEvent = ChatEvent & { eventType: 'conversation.opened' };
/** Any event a plugin can receive. */
export type AnyEvent = MessageEvent | ChatEvent;

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
 * Result of stdio `events.message` and `events.deliver`: the plugin's decision, sent as soon as it
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
