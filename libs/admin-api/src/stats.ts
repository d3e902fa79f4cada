import { z } from 'zod';
import { PLUGIN_STATES, PluginQueueSchema } from './plugins';

/** One 10 s bucket of the dashboard's series. */
export const StatsBucketSchema = z
  .object({
    at: z.string().describe('Start of the bucket (ISO 8601).'),
    eventsIn: z.number().int().describe('Events accepted and routed in the bucket.'),
    completed: z.number().int().describe('Deliveries that reached the final state completed in the bucket.'),
    declined: z.number().int(),
    failed: z.number().int(),
    expired: z.number().int(),
    p50Milliseconds: z
      .number()
      .nullable()
      .describe(
        'Median end-to-end latency (received until every delivery was final) of the events completed in the bucket; null when none.',
      ),
    p99Milliseconds: z.number().nullable().describe('99th percentile of the same, from a bounded sample per bucket.'),
  })
  .meta({ id: 'StatsBucket' });
export type StatsBucket = z.infer<typeof StatsBucketSchema>;

export const PluginHealthSchema = z
  .object({
    pluginId: z.string(),
    name: z.string().optional(),
    transport: z.enum(['stdio-jsonrpc', 'http']),
    state: z.enum(PLUGIN_STATES),
    health: z
      .enum(['healthy', 'degraded', 'unreachable'])
      .optional()
      .describe('HTTP plugins: unreachable while the circuit breaker is open.'),
    deliveries: z.number().int().describe('Deliveries that reached a final state in the last 5 minutes.'),
    failed: z.number().int().describe('Of them, failed.'),
    expired: z.number().int().describe('Of them, expired in the queue.'),
    errorRate: z.number().nullable().describe('(failed + expired) / deliveries over the last 5 minutes; null without deliveries.'),
    queue: PluginQueueSchema.nullable().describe('Its event queue on this host (the backlog); null before any event was routed to it.'),
    lastError: z
      .object({ code: z.string(), message: z.string(), at: z.string() })
      .nullable()
      .describe('The last failed or expired delivery since the host started; null when none.'),
  })
  .meta({ id: 'PluginHealth' });
export type PluginHealth = z.infer<typeof PluginHealthSchema>;

export const STATS_ALERT_KINDS = ['pluginFailed', 'circuitOpen', 'eventsExpiring', 'updatePending'] as const;

export const StatsAlertSchema = z
  .object({
    kind: z
      .enum(STATS_ALERT_KINDS)
      .describe(
        "pluginFailed: a stdio plugin waits for an operator; circuitOpen: an HTTP plugin's circuit breaker is open; eventsExpiring: deliveries expired in a queue in the last 5 minutes; updatePending: an uploaded update waits for confirmation.",
      ),
    pluginId: z.string(),
    detail: z.string().optional().describe('The reason, error code or version, when there is one.'),
    pendingUpdateId: z.string().optional().describe('updatePending: the id to confirm or cancel.'),
  })
  .meta({ id: 'StatsAlert' });
export type StatsAlert = z.infer<typeof StatsAlertSchema>;

export const StatsResponseSchema = z.object({
  generatedAt: z.string(),
  bucketSeconds: z.number().int().describe('Seconds each bucket covers (10).'),
  buckets: z.array(StatsBucketSchema).describe('The last hour on this host, oldest first; the last bucket is the current, partial one.'),
  plugins: z.array(PluginHealthSchema).describe('Every registered plugin, by pluginId.'),
  alerts: z.array(StatsAlertSchema).describe('What needs the operator now.'),
});
export type StatsResponse = z.infer<typeof StatsResponseSchema>;
