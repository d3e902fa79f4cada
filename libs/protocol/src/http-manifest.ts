import { z } from 'zod';
import { issueParams } from './validation';
import { ALL_CAPABILITIES, Capability, REQUIRED_HTTP_CAPABILITIES, capabilityNames } from './capabilities';
import { NonBlankString, PluginId, SemVer } from './common';
import { PROTOCOL_VERSION } from './limits';
import { CommandSchema, EventSubscriptionSchema, SettingsSchema, checkRouting } from './manifest';
import { PermissionListSchema } from './permissions';

/**
 * `capabilities` of an HTTP manifest. The zod schema takes any non-negative
 * integer so the manifest check can name the missing or unknown bits
 * (`manifest.capabilities.*`); the generated JSON Schema lists the valid
 * values instead (see json-schema.ts).
 */
export const HttpCapabilitiesSchema = z
  .number()
  .int()
  .min(0)
  .describe('Bit flags: ReceiveMessages=1, SendMessages=2, InterceptMessages=4, HttpTransport=8; at least 9.');

/** Every `capabilities` value an HTTP manifest may declare: 9, 11, 13 and 15. */
export const VALID_HTTP_CAPABILITY_VALUES: readonly number[] = Array.from({ length: ALL_CAPABILITIES + 1 }, (_, v) => v).filter(
  (v) => (v & REQUIRED_HTTP_CAPABILITIES) === REQUIRED_HTTP_CAPABILITIES,
);

/**
 * `ModernPluginManifest`, returned by `GET {baseUrl}/host/plugin/manifest`.
 *
 * Beyond the contract's six fields, an HTTP plugin may declare the same
 * routing as a stdio plugin (subscriptions, commands, permissions), so one
 * plugin definition serves both transports. `eventSubscriptions` defaults to
 * `message.created` and `permissions` to `messages.reply`, which is what the
 * contract's minimal plugin (capabilities 9) needs.
 */
export const HttpManifestSchema = z
  .object({
    $schema: z.string().optional().describe('Editor hint; ignored by the host.'),
    pluginId: PluginId,
    name: NonBlankString.max(100),
    version: SemVer,
    author: NonBlankString.max(100),
    description: z.string().max(500).optional(),
    protocolVersion: z.literal(PROTOCOL_VERSION).describe('Must be 2.'),
    sdkVersion: SemVer.optional(),
    capabilities: HttpCapabilitiesSchema,
    eventSubscriptions: z
      .array(EventSubscriptionSchema)
      .min(1)
      .default([{ eventType: 'message.created' }]),
    permissions: PermissionListSchema.default(['messages.reply']),
    commands: z.array(CommandSchema).default([]),
    settings: SettingsSchema.optional(),
  })
  // Unknown fields are ignored, not refused: the service is deployed
  // independently and may be newer than the host.
  .loose()
  .superRefine((m, ctx) => {
    const missing = REQUIRED_HTTP_CAPABILITIES & ~m.capabilities;
    if (missing) {
      ctx.addIssue({
        code: 'custom',
        path: ['capabilities'],
        message: `capabilities ${m.capabilities} lack ${capabilityNames(missing).join(' and ')}; an HTTP plugin must declare ReceiveMessages (1) and HttpTransport (8), at least 9`,
        params: issueParams('manifest.capabilities.missing'),
      });
    }
    if (m.capabilities & ~ALL_CAPABILITIES) {
      ctx.addIssue({
        code: 'custom',
        path: ['capabilities'],
        message: `capabilities ${m.capabilities} set unknown bits; the known flags add up to at most ${ALL_CAPABILITIES}`,
        params: issueParams('manifest.capabilities.unknown'),
      });
    }
    if (m.permissions.includes('messages.send') && !(m.capabilities & Capability.SendMessages)) {
      ctx.addIssue({
        code: 'custom',
        path: ['capabilities'],
        message: 'permission "messages.send" needs the SendMessages capability (2)',
        params: issueParams('manifest.capabilities.missing'),
      });
    }
    checkRouting(m, ctx);
  });

export type HttpManifest = z.output<typeof HttpManifestSchema>;
export type HttpManifestInput = z.input<typeof HttpManifestSchema>;
/** The contract's name for the HTTP manifest. */
export type ModernPluginManifest = HttpManifest;
