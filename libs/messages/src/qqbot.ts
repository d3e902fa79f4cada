import { LIMITS, type Target } from '@host/protocol';
import { breakTags, countCodePoints, escapeGuildText, escapeMarkdownLiteral } from './escape';
import type { NormalizedKeyboard, NormalizedMessage } from './normalize';
import type { ProviderRenderer } from './renderer';
import { fail, ok, quote, type MessageResult } from './result';

/** One button of a QQ Bot keyboard (msg-btn.md of tencent-connect/bot-docs, "数据结构与协议"). */
export interface QQButton {
  id: string;
  render_data: { label: string; visited_label: string; style: 0 | 1 };
  action: {
    /** 0 link, 1 callback, 2 command. */
    type: 0 | 1 | 2;
    data: string;
    /** 2: everyone may click. */
    permission: { type: 2 };
    unsupport_tips: string;
    enter?: boolean;
  };
}

/**
 * The QQ Bot send body. The provider adds `msg_id` or `event_id` (passive reply) and `msg_seq` when it
 * sends, and for msg_type 7 uploads `media.url` (or the bytes of `media.media_id`, a plugin's upload) and sends
 * `media: {file_info}` in its place.
 */
export type QQMessageBody =
  | { msg_type: 0; content: string }
  | { msg_type: 2; markdown: { content: string }; keyboard?: { content: { rows: { buttons: QQButton[] }[] } } }
  | { msg_type: 7; content: string; media: QQMediaSource };

/** Where the bytes of a msg_type 7 body come from: a URL the platform fetches, or a plugin's upload the host sends. */
export type QQMediaSource = { file_type: 1; url: string } | { file_type: 1; media_id: string };

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
    let image: QQMediaSource | undefined;
    const parts = message.parts;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as NormalizedMessage['parts'][number];
      if (part.type === 'text') {
        // Normalisation keeps `literal` only in markdown messages.
        content += part.literal ? escapeMarkdownLiteral(part.text) : guild ? escapeGuildText(part.text) : breakTags(part.text);
        continue;
      }
      if (part.type === 'file') {
        return fail(
          'message.part.unsupported_target',
          `parts[${i}] is a file; QQ Bot's upload endpoint takes no files yet (file_type 4). Send a link to it in a text part.`,
        );
      }
      if (part.type === 'image') {
        if (target.type !== 'group' && target.type !== 'user') {
          return fail(
            'message.part.unsupported_target',
            `parts[${i}] is an image and the target is of type "${target.type}"; the host sends images to QQ groups and one-to-one chats only.`,
          );
        }
        image = part.mediaId !== undefined ? { file_type: 1, media_id: part.mediaId } : { file_type: 1, url: part.url ?? '' };
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
    if (image !== undefined) {
      if (message.keyboard) {
        return fail(
          'message.keyboard.unsupported_format',
          'The message has an image and a keyboard; QQ Bot shows buttons only under Markdown. Send the buttons in a Markdown message of their own.',
        );
      }
      // The platform wants a non-empty content with msg_type 7 (send.md: "content 字段需要填入一个值").
      return ok({ msg_type: 7, content: content === '' ? ' ' : content, media: image });
    }
    if (!markdown) return ok({ msg_type: 0, content });
    return ok(
      message.keyboard
        ? { msg_type: 2, markdown: { content }, keyboard: { content: { rows: qqKeyboardRows(message.keyboard) } } }
        : { msg_type: 2, markdown: { content } },
    );
  },
};

/** A normalised keyboard as QQ Bot's rows of buttons; everyone may click every button. */
function qqKeyboardRows(keyboard: NormalizedKeyboard): { buttons: QQButton[] }[] {
  return keyboard.rows.map((row) => ({
    buttons: row.buttons.map((b): QQButton => {
      const type = b.action === 'link' ? 0 : b.action === 'callback' ? 1 : 2;
      return {
        id: b.id,
        render_data: { label: b.label, visited_label: b.label, style: b.style === 'primary' ? 1 : 0 },
        action: {
          type,
          data: b.data,
          permission: { type: 2 },
          unsupport_tips: b.label,
          ...(b.action === 'command' ? { enter: b.send } : {}),
        },
      };
    }),
  }));
}
