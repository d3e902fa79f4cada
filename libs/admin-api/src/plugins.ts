import {
  ConversationType,
  HttpManifestSchema,
  PermissionSchema,
  PLUGIN_ID_PATTERN,
  PLUGIN_STATES,
  RuntimeStatusSchema,
  SettingsDeliverySchema,
  StdioManifestSchema,
} from '@host/protocol';
import { z } from 'zod';
import { IssueSchema } from './issue';

// A plugin's state, its runtime status and what it saw of a settings change are the host's facts
// (@host/protocol), reported here.
export {
  PLUGIN_STATES,
  RuntimeStatusSchema,
  SettingsDeliverySchema,
  SettingsDeliveryStatus,
  type PluginState,
  type RuntimeStatusView,
  type SettingsDelivery,
} from '@host/protocol';

export const PluginIdParam = z.string().regex(PLUGIN_ID_PATTERN);

export const CommandConflictSchema = z
  .object({
    command: z.string().describe("This plugin's command."),
    prefix: z.string(),
    word: z.string().describe('The prefix and word (name or alias) that the other plugin answers too.'),
    otherPluginId: z.string(),
    otherCommand: z.string().describe("The other plugin's command the same text selects."),
    conversationTypes: z.array(ConversationType).describe('Conversation types where both commands apply.'),
    winner: z
      .string()
      .describe(
        'The plugin that gets the event first (higher priority, then lower pluginId); the other gets it too unless the winner intercepts it.',
      ),
  })
  .meta({ id: 'CommandConflict' });
export type CommandConflictView = z.infer<typeof CommandConflictSchema>;

/** A command as the plugins list shows it. */
export const CommandSummarySchema = z.object({
  name: z.string(),
  prefixes: z.array(z.string()),
  aliases: z.array(z.string()).optional(),
  description: z.string().optional(),
});

/** A plugin's event queue on this host: what waits for it and what expired there. */
export const PluginQueueSchema = z
  .object({
    active: z.number().int().describe('Events handed to the plugin and not finished.'),
    waiting: z.number().int().describe('Events waiting for a free handler, or for the plugin to finish starting.'),
    oldestWaitMilliseconds: z.number().nullable().describe('How long the oldest waiting event has waited; null when none waits.'),
    expired: z
      .number()
      .int()
      .describe('Events that waited until they could no longer be answered (delivery.expired) since the host started.'),
    dropped: z.number().int().describe('Events dropped for newer ones (overflowPolicy dropOldest) since the host started.'),
  })
  .meta({ id: 'PluginQueue' });
export type PluginQueueView = z.infer<typeof PluginQueueSchema>;

export const PluginSummarySchema = z.object({
  pluginId: z.string(),
  name: z.string().optional().describe('Absent for a package whose manifest does not validate.'),
  version: z.string().optional(),
  author: z.string().optional(),
  description: z.string().optional(),
  transport: z.enum(['stdio-jsonrpc', 'http']),
  state: z.enum(PLUGIN_STATES),
  enabled: z.boolean().describe('Started when the host starts.'),
  installedAt: z.string().optional(),
  updatedAt: z.string().optional(),
  issues: z.array(IssueSchema).optional().describe('Validation errors of an invalidManifest package.'),
  runtime: RuntimeStatusSchema.optional().describe('Process or health facts behind the state (reason, next restart, health).'),
  queue: PluginQueueSchema.optional().describe('Its event queue on this host; absent before any event was routed to it.'),
  permissions: z.array(PermissionSchema).optional().describe('Permissions the manifest declares.'),
  commands: z.array(CommandSummarySchema).optional().describe('Commands the manifest declares.'),
  commandConflicts: z
    .array(CommandConflictSchema)
    .optional()
    .describe('Commands another registered plugin answers too (same prefix and word, same conversation types); absent when none.'),
});
export type PluginSummary = z.infer<typeof PluginSummarySchema>;

export const BackupSchema = z.object({ name: z.string(), version: z.string(), createdAt: z.string() });

export const PluginDetailSchema = PluginSummarySchema.extend({
  manifest: z.union([StdioManifestSchema, HttpManifestSchema]).optional(),
  runtime: RuntimeStatusSchema.optional(),
  packageSha256: z.string().optional(),
  baseUrl: z.string().optional().describe('HTTP plugins.'),
  backups: z.array(BackupSchema).describe('Previous versions kept in backups/<pluginId>/, newest first.'),
  locations: z.object({ package: z.string(), data: z.string(), config: z.string(), cache: z.string(), logs: z.string() }).optional(),
});
export type PluginDetail = z.infer<typeof PluginDetailSchema>;

export const HealthResponseSchema = z.object({
  status: z.literal('ok'),
  version: z.string().describe("The host's own version."),
  protocolVersion: z.number().int().describe('The plugin protocol version the host speaks.'),
  sdkVersion: z.string().describe('The SDK version released with this host (Node, Python, Go and C# SDKs share it).'),
  supportedSdkVersions: z.string().describe('The SDK versions (a semver range) whose plugins this host runs.'),
  startedAt: z.string(),
  uptimeSeconds: z.number(),
});
export type HealthResponse = z.infer<typeof HealthResponseSchema>;

export const ReadyResponseSchema = z.object({
  status: z.literal('ready'),
  store: z
    .enum(['ok', 'local'])
    .describe('ok: the database server answered just now; local: the store has no server to lose (files or embedded).'),
});
export type ReadyResponse = z.infer<typeof ReadyResponseSchema>;

export const PluginListResponseSchema = z.object({ plugins: z.array(PluginSummarySchema) });
export type PluginListResponse = z.infer<typeof PluginListResponseSchema>;
export const PluginResponseSchema = z.object({ plugin: PluginDetailSchema });
export type PluginResponse = z.infer<typeof PluginResponseSchema>;

export const UninstallResponseSchema = z.object({
  uninstalled: z.string(),
  backup: z.string().nullable().describe('Where the package folder went; data and config are kept.'),
});
export type UninstallResponse = z.infer<typeof UninstallResponseSchema>;
export const DataDeletedResponseSchema = z.object({ deleted: z.string() });
export type DataDeletedResponse = z.infer<typeof DataDeletedResponseSchema>;

export const LogsQuerySchema = z.object({
  tail: z.coerce.number().int().min(1).max(5000).default(200).describe('Number of most recent lines (1 to 5000).'),
});
export const LogStreamQuerySchema = z.object({
  tail: z.coerce.number().int().min(0).max(5000).default(200).describe('First send this many of the most recent lines (0 to 5000).'),
});
export const LogLineSchema = z.object({
  at: z.string(),
  stream: z.enum(['stderr', 'log', 'host']),
  level: z.enum(['trace', 'debug', 'info', 'warn', 'error']),
  message: z.string(),
  fields: z.record(z.string(), z.unknown()).optional().describe('The structured fields of a log.write line.'),
  eventId: z
    .string()
    .optional()
    .describe('The event whose handler wrote the line: a log.write eventId the host delivered to this plugin; never on stderr lines.'),
});
export const LogsResponseSchema = z.object({ lines: z.array(LogLineSchema) });
export type LogsResponse = z.infer<typeof LogsResponseSchema>;

const SettingValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export const SettingsResponseSchema = z.object({
  schema: z.record(z.string(), z.unknown()).describe('settings.configSchema of the manifest.'),
  values: z
    .record(z.string(), z.union([SettingValue, z.object({ set: z.boolean() })]))
    .describe('Current values (defaults where unset); secret fields show only {"set": true|false}.'),
});
export type SettingsResponse = z.infer<typeof SettingsResponseSchema>;
export const SettingsPutBodySchema = z.strictObject({
  values: z
    .record(z.string(), SettingValue)
    .describe(
      'Fields to change. null clears a field (its default applies); a blank or null secret keeps the stored one; omitted fields keep their value.',
    ),
});
export type SettingsPutBody = z.infer<typeof SettingsPutBodySchema>;

export const SettingsPutResponseSchema = SettingsResponseSchema.extend({ delivery: SettingsDeliverySchema });
export type SettingsPutResponse = z.infer<typeof SettingsPutResponseSchema>;
