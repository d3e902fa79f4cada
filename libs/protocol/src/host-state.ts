import { z } from 'zod';
import { PermissionSchema } from './permissions';

// What the host knows of a plugin and reports about it: the states of a plugin and of a delivery, a stdio
// plugin's runtime status, what a running plugin saw of a settings change, and how an update's manifest differs
// from the installed one. The host's contracts (@host/host-core) and the admin API's (@host/admin-api) both
// use them, so they live here, below both.

/**
 * Plugin states as the admin API reports them. stdio plugins move through the
 * runtime states; HTTP plugins are `running` (enabled) or `stopped`
 * (disabled) and carry a separate health.
 */
export const PLUGIN_STATES = [
  'installed', // on disk, never started or stopped by the operator
  'starting', // process launched, handshake in progress
  'running',
  'stopping',
  'stopped',
  'restartPending', // crashed; a restart is scheduled
  'failed', // crash-loop budget spent or start failed; waits for an operator
  'invalidManifest', // found on disk with a manifest that does not validate
] as const;
export type PluginState = (typeof PLUGIN_STATES)[number];

export const RuntimeStatusSchema = z.object({
  state: z.enum(PLUGIN_STATES),
  stateReason: z.string().optional().describe('Why the plugin is in this state (crash reason, stdout pollution, ...).'),
  pid: z.number().int().optional(),
  startedAt: z.string().optional(),
  lastExitAt: z.string().optional(),
  lastExitCode: z.number().int().nullable().optional(),
  lastExitSignal: z.string().nullable().optional(),
  lastExitLimit: z
    .enum(['memory', 'cpu'])
    .optional()
    .describe('The resource limit that ended the last process: over its memory limit (killed by the kernel) or out of CPU time.'),
  isolation: z
    .object({
      mode: z.enum(['same-user', 'own-user', 'sandbox']).describe("The host's user, a user of its own, or its own user in a sandbox."),
      uid: z.number().int().optional().describe('The uid it runs as (own-user and sandbox).'),
      network: z.enum(['none', 'loopback', 'any']).describe('The network it can reach, as enforced.'),
      limits: z.enum(['cgroup-v2', 'cgroup-v1', 'rlimit', 'none']).describe('How its memory, process, file and CPU limits are enforced.'),
      summary: z.string().describe('One line for people, as in the plugin log.'),
    })
    .optional()
    .describe('How the running stdio process is isolated (docs/operator/security.md, "Isolation modes").'),
  crashCount: z.number().int(),
  nextRestartAt: z.string().optional(),
  lastError: z.string().optional(),
  health: z.enum(['healthy', 'degraded', 'unreachable']).optional().describe('HTTP plugins: healthy, degraded or unreachable.'),
  replica: z
    .string()
    .optional()
    .describe('Several hosts on one PostgreSQL server: the replica (HOST_REPLICA_NAME) that runs this stdio plugin, holding its lease.'),
});
export type RuntimeStatusView = z.infer<typeof RuntimeStatusSchema>;

/**
 * Where one delivery stands (docs/protocol/v2.md 6.6): `queued` in the
 * plugin's queue, `sent` awaiting the decision, `running` accepted and
 * awaiting completion, then one of the final states. `expired` waited in the
 * queue until it could no longer be answered (`delivery.expired`).
 * `interrupted` is set on load for a delivery that was not final when the
 * host stopped.
 */
export const DELIVERY_STATES = ['queued', 'sent', 'running', 'declined', 'completed', 'failed', 'expired', 'interrupted'] as const;
export type DeliveryStateView = (typeof DELIVERY_STATES)[number];

/** What a running plugin sees of a settings change (docs/protocol/v2.md 2.2). */
export const SettingsDeliveryStatus = z.enum(['live', 'nextStart', 'restartRequired', 'notSent', 'refused']);
export type SettingsDeliveryStatus = z.infer<typeof SettingsDeliveryStatus>;
export const SettingsDeliverySchema = z.object({
  status: SettingsDeliveryStatus.describe(
    'live: the running plugin took the values; nextStart: it is not running and gets them at its next start; restartRequired: it runs but did not take them, restart it to apply them; notSent: an HTTP plugin, which configures itself; refused: the running plugin refused them (the runtime tells the admin API so, which puts the previous values back and answers SETTINGS_REFUSED; a PUT never answers this status).',
  ),
  message: z.string().describe('The same for the operator, with the reason when the values did not reach the plugin.'),
  reason: z.string().optional().describe("refused: the plugin's own reason, as it answered settings.changed."),
});
export type SettingsDelivery = z.infer<typeof SettingsDeliverySchema>;

/** How an incoming manifest differs from the installed one (the update dialog, an HTTP plugin's refresh). */
export const UpdateChangesSchema = z.object({
  versionChanged: z.boolean(),
  versionOrder: z
    .enum(['upgrade', 'downgrade', 'same'])
    .describe('How the incoming version compares with the installed one by semantic-version precedence (build metadata ignored).'),
  identicalPackage: z
    .boolean()
    .describe('The upload is byte for byte the installed package (same SHA-256): confirming reinstalls what runs now.'),
  permissionsAdded: z.array(PermissionSchema),
  permissionsRemoved: z.array(PermissionSchema),
  commandsAdded: z.array(z.string()),
  commandsRemoved: z.array(z.string()),
  commandsChanged: z.array(z.string()).describe('Commands whose prefixes, aliases, scopes or priority differ.'),
  startCommandChanged: z.boolean(),
  subscriptionsAdded: z.array(z.string()).optional().describe('Event types newly subscribed to (HTTP plugin refresh).'),
  subscriptionsRemoved: z.array(z.string()).optional().describe('Event types no longer subscribed to (HTTP plugin refresh).'),
  capabilitiesAdded: z.array(z.string()).optional().describe('Capability names newly claimed (HTTP plugin refresh).'),
  capabilitiesRemoved: z.array(z.string()).optional().describe('Capability names given up (HTTP plugin refresh).'),
});
export type UpdateChanges = z.infer<typeof UpdateChangesSchema>;
