import { Capability, HttpManifestSchema, type CapabilityName } from '@host/protocol';
import { z } from 'zod';
import { CommandConflictSchema } from './plugins';
import { UpdateChangesSchema } from './packages';

/** Body of POST /plugins/http. */
export const RegisterHttpPluginSchema = z.strictObject({
  baseUrl: z.string().describe('The plugin service address, e.g. https://plugin.example.com.'),
  requestTimeoutMilliseconds: z.number().int().min(100).max(120_000).optional().describe('Per-event timeout; default 10000.'),
  enabled: z.boolean().default(true),
});
export type RegisterHttpPluginInput = z.input<typeof RegisterHttpPluginSchema>;

const StampedCodeMessageSchema = z.object({ code: z.string(), message: z.string(), at: z.string() });

export const HttpPluginHealthSchema = z.object({
  status: z.enum(['healthy', 'degraded', 'unreachable']),
  circuit: z.enum(['closed', 'open', 'half-open']),
  consecutiveFailures: z.number().int(),
  lastError: StampedCodeMessageSchema.nullable(),
  lastWarning: StampedCodeMessageSchema.nullable().describe(
    'The last thing the host ignored or refused in a response that was otherwise fine.',
  ),
  lastSuccessAt: z.string().nullable(),
  lastFailureAt: z.string().nullable(),
  nextProbeAt: z.string().nullable().describe('While the circuit is open: when the next probe may go out.'),
});

const CAPABILITY_NAMES = Object.keys(Capability) as [CapabilityName, ...CapabilityName[]];

/** What the API shows of an HTTP plugin. The signing secret is never part of it. */
export const HttpPluginViewSchema = z.object({
  pluginId: z.string(),
  transport: z.literal('http'),
  baseUrl: z.string(),
  name: z.string(),
  version: z.string(),
  author: z.string(),
  description: z.string().optional(),
  capabilities: z.number().int(),
  capabilityNames: z.array(z.enum(CAPABILITY_NAMES)),
  enabled: z.boolean(),
  state: z.enum(['running', 'stopped']),
  installedAt: z.string(),
  updatedAt: z.string(),
  requestTimeoutMilliseconds: z.number().int().optional(),
  manifest: HttpManifestSchema,
  health: HttpPluginHealthSchema.nullable().describe('null while disabled (no deliveries are made).'),
});
export type HttpPluginView = z.infer<typeof HttpPluginViewSchema>;

/** The answer to POST /plugins/http. */
export const RegisterHttpPluginResponseSchema = z.object({
  plugin: HttpPluginViewSchema,
  signingSecret: z.string().describe('Shown once: configure the plugin with it to verify the host signature.'),
  notice: z.string(),
  commandConflicts: z.array(CommandConflictSchema).optional().describe('Commands another registered plugin answers too; absent when none.'),
});
export type RegisterHttpPluginResponse = z.infer<typeof RegisterHttpPluginResponseSchema>;

/** The answer to POST /plugins/{pluginId}/refresh. */
export const RefreshHttpPluginResponseSchema = z.object({
  plugin: HttpPluginViewSchema,
  previousVersion: z.string(),
  changed: z.boolean().describe('True when the stored manifest was replaced by the fetched one.'),
  changes: UpdateChangesSchema.describe('The fetched manifest compared with the stored one, as in the update dialog of packages.'),
  confirmationRequired: z
    .boolean()
    .describe(
      'True when the fetched manifest adds capabilities, permissions, subscriptions or commands: nothing was stored; confirm with POST /plugins/{pluginId}/refresh/confirm.',
    ),
  incoming: z
    .object({ manifest: HttpManifestSchema, sha256: z.string().describe('SHA-256 of the fetched manifest; the confirmation names it.') })
    .optional()
    .describe('While confirmationRequired: the manifest waiting for confirmation.'),
});
export type RefreshHttpPluginResponse = z.infer<typeof RefreshHttpPluginResponseSchema>;

/** Body of POST /plugins/{pluginId}/refresh/confirm. */
export const ConfirmHttpRefreshBodySchema = z.strictObject({
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .describe('incoming.sha256 of the refresh answer the operator reviewed.'),
});
export type ConfirmHttpRefreshBody = z.infer<typeof ConfirmHttpRefreshBodySchema>;
