import {
  LIMITS,
  type CompositePart,
  type EveryoneMentionPart,
  type MessagePart,
  type TextPart,
  type UserMentionPart,
} from '@host/protocol';
import { fail, ok, type MessageResult } from './result';

/** Anything that names a user to mention: a mention id, or a UserRef such as `event.sender`. */
export type MentionableUser = string | { readonly mentionId: string; readonly displayName?: string };

/** A text part. Text is always escaped when rendered; markup in it never becomes a tag. */
export function text(value: string): TextPart {
  return { type: 'text', text: value };
}

/**
 * A literal text part: in a markdown message its Markdown syntax is escaped,
 * so it shows exactly as written (use it for text that came from users). In
 * a text message it is the same as text().
 */
export function literal(value: string): TextPart {
  return { type: 'text', text: value, literal: true };
}

/**
 * A typed user mention. Given a UserRef, its `mentionId` and `displayName`
 * are used; an explicit `displayName` wins. The id is checked when the
 * message is normalised (`message.mention.invalid_id`), not here, so building
 * parts never fails.
 */
export function mentionUser(user: MentionableUser, displayName?: string): UserMentionPart {
  const id = typeof user === 'string' ? user : user.mentionId;
  const name = displayName ?? (typeof user === 'string' ? undefined : user.displayName);
  // Leave the key out rather than set it to undefined, so parts compare and serialise cleanly.
  return name === undefined ? { type: 'mention', target: 'user', id } : { type: 'mention', target: 'user', id, displayName: name };
}

/**
 * Mentions 1 to LIMITS.maxMentionUsers users, separated by single spaces, as
 * one composite part. Any other count is `message.mention.too_many`.
 */
export function mentionUsers(...users: MentionableUser[]): MessageResult<CompositePart> {
  if (users.length < 1 || users.length > LIMITS.maxMentionUsers) {
    return fail('message.mention.too_many', `It was given ${users.length} users.`);
  }
  const parts: MessagePart[] = [];
  for (const user of users) {
    if (parts.length > 0) parts.push(text(' '));
    parts.push(mentionUser(user));
  }
  return ok({ type: 'composite', parts });
}

/** Mentions everyone in a group. The host sends it only for plugins with the messages.mentionEveryone permission. */
export function mentionEveryone(): EveryoneMentionPart {
  return { type: 'mention', target: 'everyone' };
}

/** Groups parts; composites are flattened when the message is normalised (at most 8 levels deep). */
export function composite(...parts: MessagePart[]): CompositePart {
  return { type: 'composite', parts };
}
