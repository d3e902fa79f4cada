import { randomUUID } from 'node:crypto';
import { IsoTimeCache, type MessageProvider, type ProviderSendResult, type ReplyContext } from '@host/host-dispatch';
import type { ProviderBody } from '@host/messages';
import type { MessageEvent, Target } from '@host/protocol';

export interface ConsoleMessageInput {
  conversation: { type: 'group' | 'c2c'; id: string };
  sender: { id: string; displayName?: string };
  text: string;
}

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
    const requestBody = replyTo ? { ...body, msg_id: replyTo.messageId, msg_seq: replyTo.sequence } : { ...body };
    return { messageId: `console-out-${++this.sent}`, requestBody };
  }

  /** The message.created event a user's console message becomes. */
  createEvent(input: ConsoleMessageInput): MessageEvent {
    const now = this.now();
    const group = input.conversation.type === 'group';
    const window = group ? (this.o.groupReplyWindowMilliseconds ?? 5 * 60_000) : (this.o.c2cReplyWindowMilliseconds ?? 60 * 60_000);
    const messageId = `console-in-${++this.received}`;
    const id = input.conversation.id;
    return {
      eventId: randomUUID(),
      eventType: 'message.created',
      timestamp: this.timestamps.at(now),
      source: this.id,
      bot: { botAccountId: this.botAccountId, platform: 'console', displayName: this.o.botDisplayName ?? 'Console bot' },
      conversation: group ? { type: 'group', conversationId: id, groupOpenId: id } : { type: 'c2c', conversationId: id, c2cOpenId: id },
      sender: {
        provider: this.id,
        mentionId: input.sender.id,
        ...(group ? { memberOpenId: input.sender.id } : { userOpenId: input.sender.id }),
        ...(input.sender.displayName ? { displayName: input.sender.displayName } : {}),
      },
      message: { id: messageId, content: input.text, attachments: [], mentions: [] },
      messageReference: {
        messageId,
        targetType: group ? 'group' : 'user',
        targetId: id,
        replyUntil: this.deadlines.at(now + window),
        restrictions: [],
      },
    };
  }
}
