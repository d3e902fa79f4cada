import { HostError } from '@host/host-core';
import type { MessageProvider, ProviderSendResult, ReplyContext } from '@host/host-dispatch';
import type { ProviderBody, QQMessageBody } from '@host/messages';
import type { Target } from '@host/protocol';
import type { QqBotAccount, QqBotAccounts } from './accounts';

/** The OpenAPI path a message to `target` is posted to. */
export function messagePath(target: Target): string {
  const id = encodeURIComponent(target.id);
  switch (target.type) {
    case 'group':
      return `/v2/groups/${id}/messages`;
    case 'user':
      return `/v2/users/${id}/messages`;
    case 'channel':
      return `/channels/${id}/messages`;
    default:
      throw new HostError(
        'message.target.invalid',
        `the qqbot provider does not send to ${target.type} targets (guild direct messages are not supported); use a group, user or channel target`,
      );
  }
}

/**
 * The request body for `target`: the renderer's body, plus msg_id and msg_seq
 * for a passive reply. Channel messages take `content` and `msg_id` only.
 */
export function requestBody(target: Target, body: ProviderBody, replyTo: ReplyContext | undefined): Record<string, unknown> {
  if (target.type === 'channel') {
    const b = body as unknown as QQMessageBody;
    const content = b.msg_type === 0 ? b.content : b.markdown.content;
    return replyTo ? { content, msg_id: replyTo.messageId } : { content };
  }
  return replyTo ? { ...body, msg_id: replyTo.messageId, msg_seq: replyTo.sequence } : { ...body };
}

/**
 * The QQ Bot provider: sends rendered bodies through the OpenAPI of the
 * account that received the event. `messages.send` (no event) goes through
 * the only account, or is refused when there are several.
 */
export class QqBotProvider implements MessageProvider {
  readonly id = 'qqbot';
  readonly renderer = 'qqbot';

  constructor(private readonly accounts: QqBotAccounts) {}

  async send(target: Target, body: ProviderBody, replyTo?: ReplyContext): Promise<ProviderSendResult> {
    const account = this.accountFor(replyTo);
    const path = messagePath(target);
    const sent = requestBody(target, body, replyTo);
    const result = await account.client.post(path, sent, replyTo !== undefined);
    return { messageId: result.id, requestBody: sent };
  }

  private accountFor(replyTo: ReplyContext | undefined): QqBotAccount {
    if (replyTo) {
      const account = this.accounts.get(replyTo.botAccountId);
      if (!account) {
        throw new HostError(
          'message.target.invalid',
          `QQ Bot account "${replyTo.botAccountId}" that received event ${replyTo.eventId} is no longer configured`,
        );
      }
      return account;
    }
    const all = this.accounts.list();
    if (all.length === 1) return all[0]!;
    throw new HostError(
      'message.target.invalid',
      all.length === 0
        ? 'no QQ Bot account is configured'
        : 'several QQ Bot accounts are configured; a message that answers no event cannot choose one',
    );
  }
}
