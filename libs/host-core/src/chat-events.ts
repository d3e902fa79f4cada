import type { ChatEvent, ConversationType, MessageEvent, MessageReference, TargetType } from '@host/protocol';

/**
 * Events of the types other than `message.created` travel through the dispatcher, the inbox, the event log and
 * a cluster's durable queue as message-shaped events, whose routing reads `eventType`, `bot`, `conversation`,
 * `messageReference` and the message text for commands. The shape the plugin gets is kept whole beside them
 * under this key (it survives JSON, so a replica that takes the delivery from the queue sends it too), and the
 * endpoints send it with `events.deliver` instead of the message-shaped copy.
 */
const CHAT_EVENT = 'chatEvent';

/** Reference of an event that takes no reply: an empty message id, which providers refuse as `message.reference.unavailable`. */
export const NO_REPLY_RESTRICTION = 'reply=unavailable';

const TARGET_OF: Record<ConversationType, TargetType> = { group: 'group', c2c: 'user', channel: 'channel', direct: 'direct' };

/**
 * `event` as the dispatcher routes it: message-shaped, with empty text (so no command matches and every
 * subscriber is an observer) and, for an event without one, a reference that takes no reply.
 */
export function routableEvent(event: ChatEvent): MessageEvent {
  const reference: MessageReference = event.messageReference ?? {
    messageId: '',
    targetType: TARGET_OF[event.conversation.type],
    targetId: event.conversation.conversationId,
    restrictions: [NO_REPLY_RESTRICTION],
  };
  const routable = {
    eventId: event.eventId,
    eventType: event.eventType,
    timestamp: event.timestamp,
    source: event.source,
    bot: event.bot,
    conversation: event.conversation,
    sender: event.sender ?? { provider: event.source, mentionId: 'unknown' },
    message: { id: event.eventId, content: '', attachments: [], mentions: [] },
    messageReference: reference,
    [CHAT_EVENT]: event,
  };
  return routable as unknown as MessageEvent;
}

/** The chat event a routed event stands for, or undefined for a message event. */
export function chatEventOf(event: MessageEvent): ChatEvent | undefined {
  const kept = (event as unknown as Record<string, unknown>)[CHAT_EVENT];
  return kept !== null && typeof kept === 'object' ? (kept as ChatEvent) : undefined;
}

/** Whether a reply to `reference` cannot go anywhere (the event takes no reply). */
export function takesNoReply(messageId: string): boolean {
  return messageId === '';
}
