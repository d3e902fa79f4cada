import type { PluginEndpoint, PluginRouting } from '@host/host-core';
import type { CommandMatch, MessageEvent } from '@host/protocol';
import { matchCommand } from './command-matcher';

export interface Recipient {
  endpoint: PluginEndpoint;
  routing: PluginRouting;
  /** The matched command; absent for an observer. */
  command?: CommandMatch;
  priority: number;
}

/** True when one of the plugin's subscriptions takes this event (type, bot and conversation filters). */
export function isSubscribed(routing: PluginRouting, event: MessageEvent): boolean {
  return routing.eventSubscriptions.some(
    (s) =>
      s.eventType === event.eventType &&
      (!s.botAccountIds || s.botAccountIds.includes(event.bot.botAccountId)) &&
      (!s.conversationIds || s.conversationIds.includes(event.conversation.conversationId)),
  );
}

/**
 * The plugins an event goes to, in delivery order: plugins whose command
 * matched, by priority (highest first), then observers (subscribed plugins
 * without a matching command); ties by pluginId, ascending.
 */
export function selectRecipients(event: MessageEvent, endpoints: Iterable<PluginEndpoint>): Recipient[] {
  const commanded: Recipient[] = [];
  const observers: Recipient[] = [];
  for (const endpoint of endpoints) {
    // A plugin on its way to taking events (starting, restarting) gets the event when it is ready; a failed
    // one is a recipient whose delivery fails at once (delivery.unavailable), so the event log shows it.
    if (!endpoint.isAvailable() && !waitsForStart(endpoint) && !(endpoint.isDown?.() ?? false)) continue;
    const routing = endpoint.routing();
    if (!isSubscribed(routing, event)) continue;
    const matched = matchCommand(event.message.content, routing.commands, event.conversation.type);
    if (matched) commanded.push({ endpoint, routing, command: matched.match, priority: matched.priority });
    else observers.push({ endpoint, routing, priority: 0 });
  }
  const byId = (a: Recipient, b: Recipient) =>
    a.endpoint.pluginId < b.endpoint.pluginId ? -1 : a.endpoint.pluginId > b.endpoint.pluginId ? 1 : 0;
  commanded.sort((a, b) => b.priority - a.priority || byId(a, b));
  observers.sort(byId);
  return [...commanded, ...observers];
}

/**
 * Whether the endpoint does not take events now but is about to (a stdio
 * plugin starting, or waiting to restart after a crash): deliveries routed to
 * it wait in its queue instead of failing.
 */
export function waitsForStart(endpoint: PluginEndpoint): boolean {
  return !endpoint.isAvailable() && (endpoint.isStarting?.() ?? false);
}
