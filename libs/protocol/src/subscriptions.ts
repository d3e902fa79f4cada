import type { EventSubscription } from './manifest';

/** What routing reads of an event to decide whether a plugin's subscriptions take it. */
export interface SubscriptionFacts {
  eventType: string;
  botAccountId: string;
  conversationId: string;
}

/**
 * The routing rule of the spec ("Event types and growth"): a plugin gets an event when one of its
 * subscriptions names the event's type and, where the subscription lists them, its bot account and its
 * conversation. A type the plugin does not name never reaches it, so an event type added to protocol v2
 * changes nothing for a plugin written before it.
 */
export function subscriptionsTake(subscriptions: readonly EventSubscription[], event: SubscriptionFacts): boolean {
  return subscriptions.some(
    (s) =>
      s.eventType === event.eventType &&
      (!s.botAccountIds || s.botAccountIds.includes(event.botAccountId)) &&
      (!s.conversationIds || s.conversationIds.includes(event.conversationId)),
  );
}
