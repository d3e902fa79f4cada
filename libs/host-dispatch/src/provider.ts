import type { ProviderBody } from '@host/messages';
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
   * `message` is what `body` was rendered from, for a provider that must send it otherwise.
   */
  send(
    target: Target,
    body: ProviderBody,
    replyTo?: ReplyContext,
    message?: Pick<OutgoingMessage, 'format' | 'parts'>,
  ): Promise<ProviderSendResult>;
}

/** The providers of one host, by id. */
export class ProviderRegistry {
  private readonly providers = new Map<string, MessageProvider>();

  register(provider: MessageProvider): void {
    if (this.providers.has(provider.id)) throw new Error(`A message provider "${provider.id}" is already registered.`);
    this.providers.set(provider.id, provider);
  }

  get(id: string): MessageProvider | undefined {
    return this.providers.get(id);
  }

  ids(): string[] {
    return [...this.providers.keys()];
  }

  /** The provider that has the bot account `botAccountId` (the first registered, should two claim it). */
  forBotAccount(botAccountId: string): MessageProvider | undefined {
    for (const p of this.providers.values()) if (p.botAccountIds().includes(botAccountId)) return p;
    return undefined;
  }

  /** Every bot account of every provider, in registration order. */
  botAccountIds(): string[] {
    return [...this.providers.values()].flatMap((p) => p.botAccountIds());
  }
}
