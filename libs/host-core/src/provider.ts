import type { MessageFormat, OutgoingMessage, Target } from '@host/protocol';

/** Which inbound message a reply answers; providers turn it into their passive-reply fields. */
export interface ReplyContext {
  eventId: string;
  /** The provider's id of the message being answered (QQ Bot: msg_id). */
  messageId: string;
  /** 1 for the first reply to this event, 2 for the next, ... (QQ Bot: msg_seq). */
  sequence: number;
  /** The bot account that received the event (`bot.botAccountId`): a provider with several accounts answers through this one. */
  botAccountId: string;
  /** This reply may have been sent by an earlier process ({@link OutboundRequest.sentBefore}). */
  sentBefore?: true;
}

export interface ProviderSendResult {
  /** The id the provider gave the sent message. */
  messageId: string;
  /** The exact request body the provider sent, for the event log. */
  requestBody: unknown;
  /** The format that went out, when the provider sent another than the message asked for (Markdown as text). */
  format?: MessageFormat;
}

/**
 * A messaging provider (QQ Bot, OneBot, the console): where rendered bodies
 * go. It is the only provider-specific piece on the outbound path, so a new
 * provider plugs in by registering one of these (and a renderer, when its
 * body format is new) without touching the dispatcher.
 */
export interface MessageProvider {
  /** The name events from this provider carry in `source`. */
  readonly id: string;
  /** The @host/messages renderer that shapes its bodies (e.g. "qqbot"). */
  readonly renderer: string;
  /** The bot accounts it sends as, now (`bot.botAccountId` of its events); `messages.send` is routed by these. */
  botAccountIds(): readonly string[];
  /**
   * Sends `body`. A reply carries `replyTo` (its bot is `replyTo.botAccountId`);
   * a send carries the resolved `target.botAccountId`, one of `botAccountIds()`.
   * `body` is what the provider's renderer made of the message (a ProviderBody of @host/messages);
   * `message` is what `body` was rendered from, for a provider that must send it otherwise.
   */
  send(
    target: Target,
    body: Readonly<Record<string, unknown>>,
    replyTo?: ReplyContext,
    message?: Pick<OutgoingMessage, 'format' | 'parts'>,
  ): Promise<ProviderSendResult>;
}
