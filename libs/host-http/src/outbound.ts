import type { OutboundSink } from '@host/host-core';
import { Capability, type MessageEvent, type OutboundMessage, type Target } from '@host/protocol';

/** True when `target` is where the event came from, so the message is a reply. */
export function isEventConversation(event: MessageEvent, target: Target): boolean {
  return target.type === event.messageReference.targetType && target.id === event.messageReference.targetId;
}

/**
 * Hands each outbound message of a response to the sink, in order. A message
 * without a target, or targeting the event's own conversation, is a reply;
 * any other target is a send, which needs the SendMessages capability here
 * and the messages.send permission in the sink. A refused message is logged
 * and does not stop the ones after it, as separate stdio calls would not.
 */
export async function deliverOutbound(
  pluginId: string,
  capabilities: number,
  event: MessageEvent,
  messages: readonly OutboundMessage[],
  sink: OutboundSink,
  warn: (code: string, message: string) => void,
): Promise<void> {
  for (const [index, item] of messages.entries()) {
    const message = { format: item.format, parts: item.parts, ...(item.keyboard ? { keyboard: item.keyboard } : {}) };
    const isReply = !item.target || isEventConversation(event, item.target);
    if (!isReply && !(capabilities & Capability.SendMessages)) {
      warn(
        'http.outbound.send_not_allowed',
        `event ${event.eventId}, outboundMessages[${index}]: target ${item.target!.type}:${item.target!.id} needs the SendMessages capability; not sent`,
      );
      continue;
    }
    try {
      await sink.send(
        isReply
          ? { pluginId, kind: 'reply', eventId: event.eventId, message }
          : { pluginId, kind: 'send', eventId: event.eventId, target: item.target, message },
      );
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      warn(
        typeof code === 'string' ? code : 'INTERNAL',
        `event ${event.eventId}, outboundMessages[${index}]: ${(e as Error)?.message ?? String(e)}`,
      );
    }
  }
}
