import { PendingUpdateSchema } from '@host/host-installer';
import { ERROR_CATALOG, HttpManifestSchema, PLUGIN_ID_PATTERN, StdioManifestSchema } from '@host/protocol';
import { PLUGIN_STATES } from '@host/host-core';
import { z } from 'zod';

/**
 * Request and response shapes of the admin API. Handlers validate requests
 * with these, the OpenAPI document is generated from them, and the API tests
 * check responses against them: one definition for all three.
 */

const ERROR_CODES = Object.keys(ERROR_CATALOG) as [string, ...string[]];

export const IssueSchema = z.object({
  code: z.enum(ERROR_CODES).describe('Stable code of the error catalogue, e.g. manifest.field.required or request.field.invalid.'),
  path: z.string().describe('The field, e.g. commands[0].name; "" is the whole document.'),
  message: z.string().describe('What is wrong with the field and the fix.'),
});

/** `details` of an error body: always an object; validation failures in `issues`. */
export const ErrorDetailsSchema = z
  .looseObject({ issues: z.array(IssueSchema).optional().describe('Validation failures, one per field.') })
  .describe('Specifics as an object: validation failures in issues; the entry, the limit or the URL beside it.');

export const ErrorBodySchema = z.object({
  error: z.object({
    code: z.enum(ERROR_CODES).describe('Stable error code; see the error catalogue.'),
    message: z.string().describe('What went wrong and what to do.'),
    details: ErrorDetailsSchema.optional(),
  }),
  pendingUpdate: PendingUpdateSchema.optional().describe('Present with UPDATE_CONFIRMATION_REQUIRED.'),
});

export const RuntimeStatusSchema = z.object({
  state: z.enum(PLUGIN_STATES),
  stateReason: z.string().optional(),
  pid: z.number().int().optional(),
  startedAt: z.string().optional(),
  lastExitAt: z.string().optional(),
  lastExitCode: z.number().int().nullable().optional(),
  lastExitSignal: z.string().nullable().optional(),
  crashCount: z.number().int(),
  nextRestartAt: z.string().optional(),
  lastError: z.string().optional(),
  health: z.enum(['healthy', 'degraded', 'unreachable']).optional(),
});

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

export const PluginIdParam = z.string().regex(PLUGIN_ID_PATTERN);

export const HealthResponseSchema = z.object({
  status: z.literal('ok'),
  version: z.string(),
  startedAt: z.string(),
  uptimeSeconds: z.number(),
});

export const PluginListResponseSchema = z.object({ plugins: z.array(PluginSummarySchema) });
export const PluginResponseSchema = z.object({ plugin: PluginDetailSchema });

export const PackageUploadFieldsSchema = z.strictObject({
  startAfterInstall: z.enum(['true', 'false']).optional().describe('Start the plugin right after installation.'),
});

export const InstallResponseSchema = z.object({
  plugin: PluginDetailSchema,
  started: z.boolean(),
  startError: z.object({ code: z.string(), message: z.string() }).optional().describe('Installed, but starting failed.'),
  backup: z.string().optional().describe('Backup folder of the replaced version (updates).'),
});

export const ConfirmUpdateBodySchema = z.strictObject({
  startAfterInstall: z.boolean().optional().describe('Start the plugin after the update even if it was not running.'),
});

export const PendingUpdateResponseSchema = z.object({ pendingUpdate: PendingUpdateSchema });
export const CancelledResponseSchema = z.object({ cancelled: z.string() });
export const UninstallResponseSchema = z.object({
  uninstalled: z.string(),
  backup: z.string().nullable().describe('Where the package folder went; data and config are kept.'),
});
export const DataDeletedResponseSchema = z.object({ deleted: z.string() });

export const LogsQuerySchema = z.object({
  tail: z.coerce.number().int().min(1).max(5000).default(200).describe('Number of most recent lines (1 to 5000).'),
});
export const LogsResponseSchema = z.object({
  lines: z.array(
    z.object({
      at: z.string(),
      stream: z.enum(['stderr', 'log', 'host']),
      level: z.enum(['trace', 'debug', 'info', 'warn', 'error']),
      message: z.string(),
    }),
  ),
});

const SettingValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export const SettingsResponseSchema = z.object({
  schema: z.record(z.string(), z.unknown()).describe('settings.configSchema of the manifest.'),
  values: z
    .record(z.string(), z.union([SettingValue, z.object({ set: z.boolean() })]))
    .describe('Current values (defaults where unset); secret fields show only {"set": true|false}.'),
});
export const SettingsPutBodySchema = z.strictObject({
  values: z
    .record(z.string(), SettingValue)
    .describe('Fields to change. null clears a field (its default applies); a blank or null secret keeps the stored one; omitted fields keep their value.'),
});
