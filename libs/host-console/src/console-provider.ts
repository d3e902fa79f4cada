import { randomUUID } from 'node:crypto';
import { HostError, routableEvent, takesNoReply, type MessageProvider, type ProviderSendResult, type ReplyContext } from '@host/host-core';
import { IsoTimeCache } from '@host/host-dispatch';
import type { ProviderBody } from '@host/messages';
import { consoleMediaUrl } from './media-route';
import type { ChatEvent, ChatEventType, MessageEvent, MessageReference, Target, UserRef } from '@host/protocol';

export interface ConsoleMessageInput {
  conversation: { type: 'group' | 'c2c'; id: string };
  sender: { id: string; displayName?: string };
  text: string;
}

/** An event other than a message in a console conversation; `interaction` comes with `interaction.created` only. */
export interface ConsoleChatEventInput {
  eventType: ChatEventType;
  conversation: ConsoleMessageInput['conversation'];
  sender: ConsoleMessageInput['sender'];
  interaction?: { data: string; buttonId?: string; messageId?: string };
}

/**
 * The message id of a reference that answers an event by its id rather than a message's, as QQ Bot's
 * `event_id` (the QQ Bot provider's own prefix, so the console's bodies read as QQ's).
 */
const EVENT_ANCHOR = 'event:';

export interface ConsoleProviderOptions {
  botAccountId?: string;
  botDisplayName?: string;
  /** Passive-reply windows, as the QQ Bot platform has them: 5 min in groups, 60 min in c2c chats. */
  groupReplyWindowMilliseconds?: number;
  c2cReplyWindowMilliseconds?: number;
  now?: () => number;
}

/**
 * The embedded default message source: a simulated bot with group and c2c
 * conversations. Its bodies are rendered exactly as the QQ Bot API takes them
 * (renderer "qqbot"), with msg_id and msg_seq on passive replies, so what a
 * plugin sees and sends here is what it would see and send on QQ.
 */
export class ConsoleProvider implements MessageProvider {
  readonly id = 'console';
  readonly renderer = 'qqbot';
  private sent = 0;
  private received = 0;
  private readonly now: () => number;
  private readonly timestamps = new IsoTimeCache();
  private readonly deadlines = new IsoTimeCache();

  constructor(private readonly o: ConsoleProviderOptions = {}) {
    this.now = o.now ?? Date.now;
  }

  get botAccountId(): string {
    return this.o.botAccountId ?? 'console-bot';
  }

  botAccountIds(): readonly string[] {
    return [this.botAccountId];
  }

  async send(_target: Target, body: ProviderBody, replyTo?: ReplyContext): Promise<ProviderSendResult> {
    if (replyTo && takesNoReply(replyTo.messageId)) {
      throw new HostError(
        'message.reference.unavailable',
        `event ${replyTo.eventId} takes no reply (the bot was removed from the conversation)`,
        {
          provider: this.id,
          eventId: replyTo.eventId,
        },
      );
    }
    const anchor = replyTo?.messageId.startsWith(EVENT_ANCHOR)
      ? { event_id: replyTo.messageId.slice(EVENT_ANCHOR.length) }
      : { msg_id: replyTo?.messageId };
    const shown = withMediaUrl(body);
    const requestBody = replyTo ? { ...shown, ...anchor, msg_seq: replyTo.sequence } : { ...shown };
    return { messageId: `console-out-${++this.sent}`, requestBody };
  }

  /** The message.created event a user's console message becomes. */
  createEvent(input: ConsoleMessageInput): MessageEvent {
    const now = this.now();
    const messageId = `console-in-${++this.received}`;
    return {
      ...this.envelope(input, now),
      eventType: 'message.created',
      sender: this.userRef(input),
      message: { id: messageId, content: input.text, attachments: [], mentions: [] },
      messageReference: this.reference(input, messageId, now),
    };
  }

  /**
   * The event of another type a console input becomes, message-shaped for the dispatcher (routableEvent), with the
   * fields QQ Bot gives that type: a click has the clicking user, the interaction and a reference answered by the
   * event's id; the bot added to a conversation, or the conversation opened again, can be answered the same way;
   * the bot removed cannot be answered.
   */
  createChatEvent(input: ConsoleChatEventInput): MessageEvent {
    const now = this.now();
    const anchor = `${EVENT_ANCHOR}console-event-${++this.received}`;
    const event: ChatEvent = {
      ...this.envelope(input, now),
      eventType: input.eventType,
      sender: this.userRef(input),
      ...(input.eventType === 'interaction.created' && input.interaction
        ? { interaction: { id: anchor.slice(EVENT_ANCHOR.length), ...input.interaction } }
        : {}),
      ...(input.eventType === 'bot.removed' ? {} : { messageReference: this.reference(input, anchor, now) }),
    };
    return routableEvent(event);
  }

  private envelope(input: Pick<ConsoleMessageInput, 'conversation'>, now: number) {
    const id = input.conversation.id;
    return {
      eventId: randomUUID(),
      timestamp: this.timestamps.at(now),
      source: this.id,
      bot: { botAccountId: this.botAccountId, platform: 'console', displayName: this.o.botDisplayName ?? 'Console bot' },
      conversation:
        input.conversation.type === 'group'
          ? { type: 'group' as const, conversationId: id, groupOpenId: id }
          : { type: 'c2c' as const, conversationId: id, c2cOpenId: id },
    };
  }

  private userRef(input: Pick<ConsoleMessageInput, 'conversation' | 'sender'>): UserRef {
    return {
      provider: this.id,
      mentionId: input.sender.id,
      ...(input.conversation.type === 'group' ? { memberOpenId: input.sender.id } : { userOpenId: input.sender.id }),
      ...(input.sender.displayName ? { displayName: input.sender.displayName } : {}),
    };
  }

  private reference(input: Pick<ConsoleMessageInput, 'conversation'>, messageId: string, now: number): MessageReference {
    const group = input.conversation.type === 'group';
    const window = group ? (this.o.groupReplyWindowMilliseconds ?? 5 * 60_000) : (this.o.c2cReplyWindowMilliseconds ?? 60 * 60_000);
    return {
      messageId,
      targetType: group ? 'group' : 'user',
      targetId: input.conversation.id,
      replyUntil: this.deadlines.at(now + window),
      restrictions: [],
    };
  }
}

/**
 * A plugin's uploaded image goes out with a URL the admin app can load (GET /api/console/media/{mediaId}) in
 * place of its media id: where QQ Bot would get its bytes, the console shows them.
 */
function withMediaUrl(body: ProviderBody): ProviderBody {
  const media = (body as { media?: { file_type?: unknown; media_id?: unknown } }).media;
  if (typeof media?.media_id !== 'string') return body;
  return { ...body, media: { file_type: media.file_type, url: consoleMediaUrl(media.media_id) } } as ProviderBody;
}
