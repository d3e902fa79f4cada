import { z } from 'zod';
import { NonBlankString } from './common';
import { LIMITS } from './limits';

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

/**
 * An absolute http(s) URL the host fetches (or hands to the provider to fetch). The host checks its
 * address against its HTTP address policy before anything is fetched: no loopback, private or link-local
 * addresses.
 */
export const MediaUrl = z
  .string()
  .max(LIMITS.maxMediaUrlChars)
  .regex(/^https?:\/\/[^\s/?#]+[^\s]*$/, { message: 'must be an absolute http or https URL without spaces' });

/** The id `media.finish` gives for uploaded bytes: usable by the plugin that uploaded them, until it expires. */
export const MediaId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{16,64}$/, { message: 'must be a media id from media.finish (16 to 64 letters, digits, _ or -)' });

/** An image or file part names its bytes one way: a URL the host fetches, or the id of bytes the plugin uploaded. */
function oneSource(part: { url?: unknown; mediaId?: unknown }, ctx: z.core.$RefinementCtx): void {
  if ((part.url === undefined) === (part.mediaId === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: [part.url === undefined ? 'url' : 'mediaId'],
      message: 'give exactly one of url and mediaId',
    });
  }
}

export const ImagePartSchema = z
  .strictObject({
    type: z.literal('image'),
    url: MediaUrl.optional().describe('Where the host fetches the image (PNG or JPEG on QQ Bot). Exactly one of url and mediaId.'),
    mediaId: MediaId.optional().describe('The id media.finish gave for uploaded image bytes. Exactly one of url and mediaId.'),
    alt: z.string().max(200).optional().describe('Text shown where the image cannot be (the console, logs).'),
  })
  .superRefine(oneSource);

export const FilePartSchema = z
  .strictObject({
    type: z.literal('file'),
    url: MediaUrl.optional().describe('Where the host fetches the file. Exactly one of url and mediaId.'),
    mediaId: MediaId.optional().describe('The id media.finish gave for uploaded bytes. Exactly one of url and mediaId.'),
    fileName: NonBlankString.max(255)
      .optional()
      .describe('The name the recipient sees; default: the name given to media.upload, or the last segment of the URL path.'),
  })
  .superRefine(oneSource);

export type ImagePart = z.infer<typeof ImagePartSchema>;
export type FilePart = z.infer<typeof FilePartSchema>;
/** A part that carries a file rather than text: at most LIMITS.maxMediaParts per message. */
export type MediaPart = ImagePart | FilePart;
export type TextPart = z.infer<typeof TextPartSchema>;
export type UserMentionPart = z.infer<typeof UserMentionPartSchema>;
export type EveryoneMentionPart = z.infer<typeof EveryoneMentionPartSchema>;
export type CompositePart = { type: 'composite'; parts: MessagePart[] };
export type MessagePart = TextPart | UserMentionPart | EveryoneMentionPart | ImagePart | FilePart | CompositePart;

// The id names the recursive definition in generated JSON Schema
// (`$defs/MessagePart`), which the other languages' generators turn into a type.
export const MessagePartSchema: z.ZodType<MessagePart> = z
  .lazy(() =>
    z.union([
      TextPartSchema,
      UserMentionPartSchema,
      EveryoneMentionPartSchema,
      ImagePartSchema,
      FilePartSchema,
      z.strictObject({ type: z.literal('composite'), parts: z.array(MessagePartSchema) }),
    ]),
  )
  .meta({ id: 'MessagePart', description: 'A text, mention, image, file or composite part of an outgoing message.' });

/**
 * What a button does when a user clicks it: "callback" gives `data` back to the plugin in
 * interaction.created, "link" opens the URL in `data`, "command" puts the text in `data` into the user's input
 * box (and sends it when `send` is true), which comes back as message.created.
 */
export const ButtonAction = z.enum(['callback', 'link', 'command']);
export type ButtonAction = z.infer<typeof ButtonAction>;

export const ButtonSchema = z
  .strictObject({
    id: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,64}$/, { message: 'must be 1 to 64 letters, digits or _ . : -' })
      .optional()
      .describe('Unique within the keyboard; comes back as interaction.buttonId. Default: the row and column, "r0c1".'),
    label: NonBlankString.max(LIMITS.maxButtonLabelChars),
    style: z.enum(['primary', 'secondary']).default('secondary'),
    action: ButtonAction,
    data: z
      .string()
      .min(1)
      .max(LIMITS.maxButtonDataChars)
      .describe('The callback data (callback), the http or https URL (link) or the text (command).'),
    send: z.boolean().default(false).describe('command only: the client sends the text at once instead of leaving it in the input box.'),
  })
  .meta({ id: 'Button' });
export type Button = z.output<typeof ButtonSchema>;

/**
 * Rows of buttons under a Markdown message. Its size is checked when the message is normalised
 * (LIMITS.maxKeyboardRows rows, LIMITS.maxKeyboardButtonsPerRow buttons per row: message.keyboard.too_large),
 * not by the schema, so an SDK can say which row is too long.
 */
export const KeyboardSchema = z
  .strictObject({
    rows: z.array(z.strictObject({ buttons: z.array(ButtonSchema) })),
  })
  .meta({ id: 'Keyboard' });
export type Keyboard = z.output<typeof KeyboardSchema>;
export type KeyboardInput = z.input<typeof KeyboardSchema>;

export const OutgoingMessageSchema = z
  .strictObject({
    format: MessageFormat.default('text'),
    parts: z.array(MessagePartSchema),
    keyboard: KeyboardSchema.optional().describe(
      'Buttons under the message; only with format "markdown" (message.keyboard.unsupported_format).',
    ),
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
