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
 * The QQ Bot provider: sends rendered bodies through the OpenAPI of one
 * account: a reply through the account that received the event, a
 * `messages.send` through the account the host resolved into
 * `target.botAccountId` (docs/protocol/v2.md 4.7).
 */
export class QqBotProvider implements MessageProvider {
  readonly id = 'qqbot';
  readonly renderer = 'qqbot';

  constructor(private readonly accounts: QqBotAccounts) {}

  botAccountIds(): readonly string[] {
    return this.accounts.ids();
  }

  async send(target: Target, body: ProviderBody, replyTo?: ReplyContext): Promise<ProviderSendResult> {
    const account = this.accountFor(target, replyTo);
    const path = messagePath(target);
    const sent = requestBody(target, body, replyTo);
    const result = await account.client.post(path, sent, replyTo !== undefined);
    return { messageId: result.id, requestBody: sent };
  }

  private accountFor(target: Target, replyTo: ReplyContext | undefined): QqBotAccount {
    const id = replyTo?.botAccountId ?? target.botAccountId;
    const account = id === undefined ? undefined : this.accounts.get(id);
    if (account) return account;
    // The host resolves the account before it calls send; it can still be removed in between.
    throw new HostError(
      'message.target.bot_unknown',
      id === undefined
        ? 'a QQ Bot message must name the bot account that sends it'
        : replyTo
          ? `QQ Bot account "${id}" that received event ${replyTo.eventId} is no longer configured`
          : `QQ Bot account "${id}" is not configured`,
      { botAccountId: id ?? null },
    );
  }
}
