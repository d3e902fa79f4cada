import { z } from 'zod';
import { LogLineSchema } from './plugins';

/** Lines of one plugin one answer of GET /api/events/{eventId}/logs carries at most. */
export const MAX_EVENT_LOG_LINES = 1000;

export const EventLogsQuerySchema = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_EVENT_LOG_LINES)
    .default(200)
    .describe(`At most this many lines per plugin, the newest (1 to ${MAX_EVENT_LOG_LINES}).`),
});

export const EventPluginLogsSchema = z.object({
  pluginId: z.string(),
  transport: z.enum(['stdio-jsonrpc', 'http']),
  kept: z
    .boolean()
    .describe(
      'true for a stdio plugin: its log.write lines name the event. false for an HTTP plugin, which has no log.write: its own logs stay with its service, and lines is empty.',
    ),
  lines: z.array(LogLineSchema).describe("The plugin's log lines written for this event, oldest first, the newest `limit` of them."),
  truncated: z.boolean().describe('true when older lines of this event were left out to keep `limit`.'),
});
export type EventPluginLogs = z.infer<typeof EventPluginLogsSchema>;

export const EventLogsResponseSchema = z.object({
  eventId: z.string(),
  plugins: z.array(EventPluginLogsSchema).describe('One entry per plugin the event was delivered to, in delivery order.'),
});
export type EventLogsResponse = z.infer<typeof EventLogsResponseSchema>;
