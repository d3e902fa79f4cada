import { PermissionSchema, UpdateChangesSchema } from '@host/protocol';
import { z } from 'zod';
import { PluginDetailSchema } from './plugins';

// How an update's manifest differs from the installed one is the host's fact (@host/protocol), reported here.
export { UpdateChangesSchema, type UpdateChanges } from '@host/protocol';

/** What the operator compares side by side before confirming an update. */
export const PackageSummarySchema = z.object({
  pluginId: z.string(),
  name: z.string(),
  version: z.string(),
  author: z.string(),
  description: z.string().optional(),
  sdkVersion: z.string(),
  startCommand: z.object({ command: z.string(), args: z.array(z.string()), workingDirectory: z.string() }),
  permissions: z.array(PermissionSchema),
  commands: z.array(z.string()).describe('Command names.'),
  sha256: z.string().describe('SHA-256 of the archive this version comes from ("" when it was found on disk).'),
});
export type PackageSummary = z.infer<typeof PackageSummarySchema>;

/** An uploaded update waiting for the operator's confirmation. */
export const PendingUpdateSchema = z.object({
  id: z.string().describe('Pending update id, used to confirm or cancel.'),
  pluginId: z.string(),
  sha256: z.string().describe('SHA-256 of the uploaded archive; confirmation re-checks it.'),
  createdAt: z.string(),
  expiresAt: z.string(),
  installed: PackageSummarySchema,
  incoming: PackageSummarySchema,
  changes: UpdateChangesSchema,
});
export type PendingUpdate = z.infer<typeof PendingUpdateSchema>;

export const PackageUploadFieldsSchema = z.strictObject({
  startAfterInstall: z.enum(['true', 'false']).optional().describe('Start the plugin right after installation.'),
});
export type PackageUploadFields = z.infer<typeof PackageUploadFieldsSchema>;

export const InstallResponseSchema = z.object({
  plugin: PluginDetailSchema,
  started: z.boolean(),
  startError: z.object({ code: z.string(), message: z.string() }).optional().describe('Installed, but starting failed.'),
  backup: z.string().optional().describe('Backup folder of the replaced version (updates).'),
  warnings: z
    .array(z.string())
    .optional()
    .describe('What the package probably gets wrong but was installed anyway (start arguments without --host-stdio); absent when none.'),
});
export type InstallResponse = z.infer<typeof InstallResponseSchema>;

export const ConfirmUpdateBodySchema = z.strictObject({
  startAfterInstall: z.boolean().optional().describe('Start the plugin after the update even if it was not running.'),
});
export type ConfirmUpdateBody = z.infer<typeof ConfirmUpdateBodySchema>;

export const PendingUpdateResponseSchema = z.object({ pendingUpdate: PendingUpdateSchema });
export type PendingUpdateResponse = z.infer<typeof PendingUpdateResponseSchema>;

export const CancelledResponseSchema = z.object({ cancelled: z.string() });
export type CancelledResponse = z.infer<typeof CancelledResponseSchema>;
