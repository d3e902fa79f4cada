import {
  composite as compositePart,
  literal as literalPart,
  mentionEveryone,
  mentionUser,
  mentionUsers,
  text as textPart,
  type MentionableUser,
} from '@host/messages';
import type { CompositePart, EveryoneMentionPart, MessagePart, TextPart, UserMentionPart } from '@host/protocol';
import { PluginMessageError } from './errors';

export type { MentionableUser };

/**
 * What `reply`, `replyMarkdown` and `send` take: typed parts, or plain strings
 * (a string is a text part). Text is always escaped when rendered, so `<` and
 * `>` in it can never become provider markup; only typed mentions do. In
 * Markdown, a string is Markdown: wrap text from users in literal().
 */
export type PartInput = MessagePart | string;

/**
 * A text part.
 *
 * @example
 * ```ts
 * import { text } from '@host/plugin-sdk-v2';
 *
 * const part = text('1 < 2'); // shown as typed: "1 < 2"
 * ```
 */
export function text(value: string): TextPart {
  return textPart(value);
}

/**
 * Text shown exactly as written, for text that came from users (command
 * arguments, stored notes). In a Markdown message its Markdown syntax is
 * escaped, so `[click](http://...)` or `![img](...)` stays text instead of
 * becoming a link or an image; in a text message it is the same as text().
 *
 * @example
 * ```ts
 * import { definePlugin, literal } from '@host/plugin-sdk-v2';
 *
 * export default definePlugin({
 *   pluginId: 'com.example.quote',
 *   async onMessage(ctx) {
 *     // "/quote [click](http://evil.example)" shows the brackets, not a link.
 *     await ctx.replyMarkdown('**Quote:** ', literal(ctx.args));
 *   },
 * });
 * ```
 */
export function literal(value: string): TextPart {
  return literalPart(value);
}

/**
 * Builders of typed mentions. Pass a UserRef from the event (`message.sender`,
 * an entry of `message.message.mentions`) or a mention id.
 *
 * @example
 * ```ts
 * import { at, definePlugin } from '@host/plugin-sdk-v2';
 *
 * export default definePlugin({
 *   pluginId: 'com.example.greeter',
 *   async onMessage(ctx) {
 *     await ctx.replyMarkdown('Welcome ', at.user(ctx.sender), '!');
 *   },
 * });
 * ```
 */
export const at = {
  /**
   * Mentions one user: `<qqbot-at-user id="..." />` in both formats, which
   * notifies the user in groups and channels.
   */
  user(user: MentionableUser, displayName?: string): UserMentionPart {
    return mentionUser(user, displayName);
  },
  /**
   * Mentions 1 to 20 users, separated by spaces. Other counts throw
   * PluginMessageError `message.mention.too_many`.
   */
  users(...users: MentionableUser[]): CompositePart {
    const result = mentionUsers(...users);
    if (!result.ok) throw new PluginMessageError(result.error.code, result.error.message);
    return result.value;
  },
  /** Mentions everyone in a guild channel (QQ shows it nowhere else); needs the `messages.mentionEveryone` permission. */
  everyone(): EveryoneMentionPart {
    return mentionEveryone();
  },
} as const;

/**
 * Groups parts into one; composites are flattened before sending (at most 8
 * levels deep).
 *
 * @example
 * ```ts
 * import { at, composite } from '@host/plugin-sdk-v2';
 *
 * const signature = composite('-- ', at.user('bot-owner-id', 'Owner'));
 * ```
 */
export function composite(...parts: PartInput[]): CompositePart {
  return compositePart(...toParts(parts));
}

/** Strings become text parts; parts pass through. */
export function toParts(parts: readonly PartInput[]): MessagePart[] {
  return parts.map((p) => (typeof p === 'string' ? textPart(p) : p));
}
