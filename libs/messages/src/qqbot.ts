import { LIMITS, type Target } from '@host/protocol';
import { breakTags, countCodePoints, escapeGuildText, escapeMarkdownLiteral } from './escape';
import type { NormalizedMessage } from './normalize';
import type { ProviderRenderer } from './renderer';
import { fail, ok, quote, type MessageResult } from './result';

/** The QQ Bot send body. The provider adds `msg_id` (passive reply) and `msg_seq` when it sends. */
export type QQMessageBody = { msg_type: 0; content: string } | { msg_type: 2; markdown: { content: string } };

/**
 * QQ target ids (group, member and user openids, channel ids) become a path
 * segment of the provider's send URL, so they use the mention id alphabet and
 * may not be "." or "..".
 */
const QQ_TARGET_ID = /^(?!\.\.?$)[A-Za-z0-9_.:@-]{1,128}$/;

const EVERYONE_TAG = '<qqbot-at-everyone />';

/**
 * Rendering rules for QQ Bot (docs/protocol/v2.md, "Rendering"), so users see
 * exactly what was typed and only the renderer's own tags are markup:
 * - text parts to a guild channel or guild direct chat escape `&`, `<`, `>`
 *   as entities, which the platform turns back once (escapeGuildText); to a
 *   group or one-to-one chat, which show entities literally, they stay as
 *   typed, with a word joiner after a `<` that could open a tag (breakTags);
 *   literal text parts of a markdown message escape every ASCII punctuation
 *   character with a backslash, so user text adds no Markdown;
 * - markdown goes only to group targets, as msg_type 2 with `markdown.content`;
 *   text format is msg_type 0 with `content`;
 * - a user mention is `<qqbot-at-user id="ID" />` in both formats: the
 *   platform's tag for groups and text channels (text-chain.md of
 *   tencent-connect/bot-docs, "使用 @ 能力");
 * - an everyone mention is `<qqbot-at-everyone />`, which the platform shows
 *   only in text channels (same page): refused for a group
 *   (message.mention.unsupported_target);
 * - a one-to-one chat (target user or direct) takes no mentions of either kind;
 * - the final content is at most LIMITS.maxMessageChars code points.
 * Checks run in that order: target id, format, then parts in order, then length.
 */
export const qqbotRenderer: ProviderRenderer<QQMessageBody> = {
  provider: 'qqbot',
  render(message: NormalizedMessage, target: Target): MessageResult<QQMessageBody> {
    if (!QQ_TARGET_ID.test(target.id)) {
      return fail(
        'message.target.invalid',
        `The target id ${quote(target.id)} is not a QQ id: use 1 to 128 letters, digits or _ . : @ - (not "." or "..").`,
      );
    }
    const markdown = message.format === 'markdown';
    if (markdown && target.type !== 'group') {
      return fail('message.format.unsupported_target', `The target is of type "${target.type}".`);
    }
    const oneToOne = target.type === 'user' || target.type === 'direct';
    const guild = target.type === 'channel' || target.type === 'direct';
    let content = '';
    const parts = message.parts;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as NormalizedMessage['parts'][number];
      if (part.type === 'text') {
        // Normalisation keeps `literal` only in markdown messages.
        content += part.literal ? escapeMarkdownLiteral(part.text) : guild ? escapeGuildText(part.text) : breakTags(part.text);
        continue;
      }
      if (oneToOne) {
        const who = part.target === 'everyone' ? 'everyone' : `user ${quote(part.id)}`;
        return fail(
          'message.mention.unsupported_target',
          `The message mentions ${who}, but the target is a one-to-one chat (type "${target.type}"). Remove the mention.`,
        );
      }
      if (part.target === 'everyone') {
        if (target.type !== 'channel') {
          return fail(
            'message.mention.unsupported_target',
            `The message mentions everyone, but the target is of type "${target.type}"; QQ shows an everyone mention only in a guild channel.`,
          );
        }
        content += EVERYONE_TAG;
      }
      // The id matches MENTION_ID_PATTERN (no quote, space or markup), so it
      // is safe inside the attribute without escaping.
      else content += `<qqbot-at-user id="${part.id}" />`;
    }
    // Code points are never more than UTF-16 units, so short content skips the count.
    if (content.length > LIMITS.maxMessageChars) {
      const chars = countCodePoints(content);
      if (chars > LIMITS.maxMessageChars) {
        return fail(
          'message.too_long',
          `The rendered content has ${chars} characters (Unicode code points), ${chars - LIMITS.maxMessageChars} over the limit of ${LIMITS.maxMessageChars}; escaping counts (to a channel & becomes &amp;).`,
        );
      }
    }
    return ok(markdown ? { msg_type: 2, markdown: { content } } : { msg_type: 0, content });
  },
};
