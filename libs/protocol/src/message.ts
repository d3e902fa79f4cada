import { z } from 'zod';

/**
 * Outgoing messages: what a plugin asks the host to send. Mentions are typed
 * parts, never markup in text, so no plugin text can forge a mention tag; the
 * host renders them for the provider (see docs/protocol/v2.md, "Rendering").
 */
export const MessageFormat = z.enum(['text', 'markdown']);
export type MessageFormat = z.infer<typeof MessageFormat>;

export const TextPartSchema = z.strictObject({
  type: z.literal('text'),
  text: z.string(),
  literal: z
    .boolean()
    .optional()
    .describe(
      'In a markdown message, show the text exactly as written: the renderer escapes its Markdown syntax, so text from users cannot add links, images or formatting. No effect in text format.',
    ),
});

export const UserMentionPartSchema = z.strictObject({
  type: z.literal('mention'),
  target: z.literal('user'),
  id: z.string().describe('The provider mention id of the user (UserRef.mentionId).'),
  displayName: z.string().optional(),
});

export const EveryoneMentionPartSchema = z.strictObject({
  type: z.literal('mention'),
  target: z.literal('everyone'),
});

export type TextPart = z.infer<typeof TextPartSchema>;
export type UserMentionPart = z.infer<typeof UserMentionPartSchema>;
export type EveryoneMentionPart = z.infer<typeof EveryoneMentionPartSchema>;
export type CompositePart = { type: 'composite'; parts: MessagePart[] };
export type MessagePart = TextPart | UserMentionPart | EveryoneMentionPart | CompositePart;

// The id names the recursive definition in generated JSON Schema
// (`$defs/MessagePart`), which the other languages' generators turn into a type.
export const MessagePartSchema: z.ZodType<MessagePart> = z
  .lazy(() =>
    z.union([
      TextPartSchema,
      UserMentionPartSchema,
      EveryoneMentionPartSchema,
      z.strictObject({ type: z.literal('composite'), parts: z.array(MessagePartSchema) }),
    ]),
  )
  .meta({ id: 'MessagePart', description: 'A text, mention or composite part of an outgoing message.' });

export const OutgoingMessageSchema = z
  .strictObject({
    format: MessageFormat.default('text'),
    parts: z.array(MessagePartSchema),
  })
  .meta({ id: 'OutgoingMessage' });
export type OutgoingMessage = z.output<typeof OutgoingMessageSchema>;
export type OutgoingMessageInput = z.input<typeof OutgoingMessageSchema>;

/** Where a message goes. `user` is a one-to-one (c2c) chat. */
export const TargetType = z.enum(['group', 'channel', 'user', 'direct']);
export type TargetType = z.infer<typeof TargetType>;

export const TargetSchema = z
  .strictObject({
    type: TargetType,
    id: z.string().min(1),
    botAccountId: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .describe(
        'The bot account that sends (`bot.botAccountId` of an event): picks the provider and, on QQ Bot, the account. In a messages.send result: the account that sent.',
      ),
  })
  .meta({ id: 'Target' });
export type Target = z.infer<typeof TargetSchema>;

/** Result of `messages.reply` / `messages.send`. */
export const SendResultSchema = z
  .strictObject({
    accepted: z.boolean(),
    messageId: z.string().optional(),
    target: TargetSchema,
    format: MessageFormat.optional().describe(
      'The format that went out, when the provider says: "text" for a Markdown message the provider sent as text (a QQ Bot account without the Markdown permission), with its mentions kept.',
    ),
  })
  .meta({ id: 'SendResult' });
export type SendResult = z.infer<typeof SendResultSchema>;
