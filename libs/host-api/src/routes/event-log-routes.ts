import { ADMIN_ROUTES, type EventLogsResponse, type EventPluginLogs } from '@host/admin-api';
import { HostError, type EventRecord, type PluginLogStore } from '@host/host-core';
import { implementRoute, type RouteDef } from '@host/host-routes';

export interface EventLogRouteDeps {
  /** The record of an event in this host's event log (replicas: the log they share), or undefined. */
  event: (eventId: string) => EventRecord | undefined | Promise<EventRecord | undefined>;
  logs: PluginLogStore;
}

/** GET /api/events/{eventId}/logs: from an event to the log lines its handlers wrote. */
export function eventLogRoutes(deps: EventLogRouteDeps): RouteDef<unknown, unknown>[] {
  return [
    implementRoute(ADMIN_ROUTES.eventLogs, async ({ params, query }) => {
      const eventId = params['eventId']!;
      const record = await deps.event(eventId);
      if (!record) throw new HostError('EVENT_NOT_FOUND', undefined, { eventId });
      const search = deps.logs.linesOfEvent?.bind(deps.logs);
      if (!search) throw new HostError('RUNTIME_UNAVAILABLE', 'Plugin logs cannot be searched by event in this host build.');
      const plugins: EventPluginLogs[] = [];
      const seen = new Set<string>();
      for (const { pluginId, transport } of record.deliveries) {
        if (seen.has(pluginId)) continue;
        seen.add(pluginId);
        if (transport === 'http') {
          plugins.push({ pluginId, transport, kept: false, lines: [], truncated: false });
          continue;
        }
        // One more than asked tells whether older lines were left out.
        const lines = await search(pluginId, eventId, query.limit + 1);
        const truncated = lines.length > query.limit;
        plugins.push({ pluginId, transport, kept: true, lines: truncated ? lines.slice(1) : lines, truncated });
      }
      const body: EventLogsResponse = { eventId, plugins };
      return { body };
    }),
  ];
}
