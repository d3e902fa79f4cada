import { z } from 'zod';
import { issueParams } from './validation';
import { Architecture, ConversationType, NonBlankString, Platform, PluginId, SemVer } from './common';
import { LIMITS, PROTOCOL_VERSION, RUNTIME_DEFAULTS } from './limits';
import { PermissionListSchema } from './permissions';

/**
 * Event types a plugin can subscribe to in protocol v2. The list grows within v2: a plugin gets only the
 * types it subscribes to, so a new type changes nothing for a plugin that does not name it.
 */
export const EventType = z.enum(['message.created', 'interaction.created', 'bot.added', 'bot.removed', 'conversation.opened']);
export type EventType = z.infer<typeof EventType>;

export const STDIO_TRANSPORT = 'stdio-jsonrpc' as const;
export const HTTP_TRANSPORT = 'http' as const;
/** The argument that puts a stdio plugin into protocol mode; without it the plugin prints help to stderr and exits. */
export const HOST_STDIO_FLAG = '--host-stdio' as const;

const EnvironmentName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
  message: 'must be an environment variable name (letters, digits and _, not starting with a digit)',
});

/** What network a stdio plugin may reach when the host sandboxes it (docs/operator/security.md). */
export const NetworkAccess = z.enum(['none', 'loopback', 'any']);
export type NetworkAccess = z.infer<typeof NetworkAccess>;

export const StdioLaunchSchema = z.strictObject({
  command: NonBlankString.describe(
    'Start command: an interpreter on PATH (node, python) or a path to an executable inside the package (./bin/plugin).',
  ),
  args: z.array(z.string()).default([]).describe('Arguments; should include --host-stdio.'),
  workingDirectory: z.string().default('.').describe('Directory to run in, relative to the package; "." is the package directory.'),
  environment: z.record(EnvironmentName, z.string()).default({}).describe('Extra environment variables for the process.'),
  network: NetworkAccess.default('any').describe(
    'Network the plugin needs: "none", "loopback" (its own loopback only) or "any". A sandboxed plugin gets at most this, and at most what the operator approves (HOST_PLUGIN_NETWORK).',
  ),
});
export type StdioLaunch = z.infer<typeof StdioLaunchSchema>;

/**
 * `transport.type` is a free string at parse time so that a wrong value gets
 * the specific `manifest.transport.unsupported` error (which points an HTTP
 * manifest to "Register HTTP plugin") instead of a generic enum error.
 */
export const StdioTransportSchema = z.strictObject({
  type: z.string().describe('Must be "stdio-jsonrpc" for a local package.'),
  stdio: StdioLaunchSchema.optional(),
});

export const SupportedPlatformSchema = z
  .strictObject({
    platform: Platform,
    architectures: z.array(Architecture).optional().describe('Omitted means every architecture.'),
  })
  .meta({ id: 'SupportedPlatform' });

export const EventSubscriptionSchema = z
  .strictObject({
    eventType: EventType,
    botAccountIds: z.array(NonBlankString).optional().describe('Only events received by these bots.'),
    conversationIds: z.array(NonBlankString).optional().describe('Only events from these conversations.'),
  })
  .meta({ id: 'EventSubscription' });
export type EventSubscription = z.infer<typeof EventSubscriptionSchema>;

const CommandWord = z.string().regex(/^[^\s]{1,32}$/, { message: 'must be 1 to 32 characters without spaces' });

export const CommandSchema = z
  .strictObject({
    name: CommandWord.describe('Command word matched after a prefix, for example "echo" in "/echo hi".'),
    aliases: z.array(CommandWord).default([]).describe('Other words that select the same command.'),
    prefixes: z
      .array(z.string().regex(/^[^\s]{0,8}$/, { message: 'must be at most 8 characters without spaces' }))
      .min(1)
      .default(['/'])
      .describe('Prefixes that start the command; "" matches the bare word.'),
    description: z.string().max(200).optional(),
    conversationScopes: z.array(ConversationType).optional().describe('Conversation types where the command applies; omitted means all.'),
    priority: z
      .number()
      .int()
      .min(0)
      .max(LIMITS.maxPriority)
      .default(0)
      .describe('Higher runs first; ties are ordered by pluginId, then command name.'),
  })
  .meta({ id: 'Command' });
export type Command = z.infer<typeof CommandSchema>;

export const OverflowPolicy = z.enum(['reject', 'dropOldest']);

export const ConcurrencySchema = z
  .strictObject({
    maxConcurrentEvents: z.number().int().min(1).max(64).default(RUNTIME_DEFAULTS.maxConcurrentEvents),
    queueCapacity: z.number().int().min(0).max(LIMITS.maxQueueCapacity).default(RUNTIME_DEFAULTS.queueCapacity),
    overflowPolicy: OverflowPolicy.default('reject').describe(
      'When queueCapacity events wait: "reject" keeps no more for a plugin that is not running (its further deliveries fail with delivery.unavailable; a running plugin\'s events wait until they expire), "dropOldest" drops the oldest waiting one for the new one.',
    ),
    maxWaitMilliseconds: z
      .number()
      .int()
      .min(1_000)
      .max(LIMITS.maxEventWaitMilliseconds)
      .optional()
      .describe(
        "How long an event may wait for a free handler before it expires (delivery.expired); omitted: until the provider's reply window closes.",
      ),
    handlerDeadlineMilliseconds: z
      .number()
      .int()
      .min(LIMITS.minHandlerDeadlineMilliseconds)
      .max(LIMITS.maxHandlerDeadlineMilliseconds)
      .default(RUNTIME_DEFAULTS.handlerDeadlineMilliseconds)
      .describe('How long one handler may run after the event is sent; past it the host cancels the event (delivery.deadline).'),
  })
  .meta({ id: 'Concurrency' });
export type Concurrency = z.infer<typeof ConcurrencySchema>;

/** A stdio plugin's limits when its manifest sets no `concurrency`: the defaults the schema fills in. */
export const DEFAULT_CONCURRENCY: Concurrency = ConcurrencySchema.parse({});

/** The limits a plugin runs with: those its manifest declared (defaults filled in by the schema), else {@link DEFAULT_CONCURRENCY}. */
export const concurrencyOf = (declared: Concurrency | undefined): Concurrency => declared ?? DEFAULT_CONCURRENCY;

export const ConfigFieldType = z.enum(['string', 'number', 'boolean', 'select', 'path', 'secret']);

export const ConfigFieldSchema = z
  .strictObject({
    type: ConfigFieldType,
    label: NonBlankString,
    description: z.string().optional(),
    required: z.boolean().default(false),
    defaultValue: z.union([z.string(), z.number(), z.boolean()]).optional(),
    options: z
      .array(z.strictObject({ value: z.string(), label: z.string().optional() }))
      .optional()
      .describe('Choices of a "select" field.'),
    min: z.number().optional(),
    max: z.number().optional(),
  })
  .meta({ id: 'ConfigField' });
export type ConfigField = z.infer<typeof ConfigFieldSchema>;

const ConfigKey = z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/, {
  message: 'must start with a letter and use letters, digits, _, . or - (at most 64 characters)',
});

export const SettingsSchema = z.strictObject({
  configSchema: z.record(ConfigKey, ConfigFieldSchema).default({}),
});

/** Fields shared by the stdio manifest and the HTTP manifest. */
const identityShape = {
  $schema: z.string().optional().describe('Editor hint; ignored by the host.'),
  pluginId: PluginId.describe('Stable id, the same across versions; a matching id makes an upload an update.'),
  name: NonBlankString.max(100),
  version: SemVer,
  author: NonBlankString.max(100),
  description: z.string().max(500).optional(),
  protocolVersion: z.literal(PROTOCOL_VERSION).describe('Must be 2.'),
};

const routingShape = {
  eventSubscriptions: z.array(EventSubscriptionSchema).min(1),
  permissions: PermissionListSchema.default([]),
  commands: z.array(CommandSchema).default([]),
};

type RoutingFields = {
  eventSubscriptions?: EventSubscription[];
  permissions?: string[];
  commands?: Command[];
};

/** Cross-field rules shared by both manifest kinds. */
export function checkRouting(m: RoutingFields, ctx: z.RefinementCtx): void {
  const perms = m.permissions ?? [];
  perms.forEach((p, i) => {
    if (perms.indexOf(p) !== i) {
      ctx.addIssue({
        code: 'custom',
        path: ['permissions', i],
        message: `permission "${p}" is listed twice; list each permission once`,
        params: issueParams('manifest.permissions.duplicate'),
      });
    }
  });
  const words = new Map<string, string>();
  (m.commands ?? []).forEach((c, i) => {
    for (const [j, w] of [c.name, ...(c.aliases ?? [])].entries()) {
      const key = w.toLowerCase();
      const owner = words.get(key);
      if (owner !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: j === 0 ? ['commands', i, 'name'] : ['commands', i, 'aliases', j - 1],
          message: `command word "${w}" is already used by command "${owner}"; names and aliases must be unique (case-insensitive)`,
          params: issueParams('manifest.commands.duplicate'),
        });
      } else {
        words.set(key, c.name);
      }
    }
  });
  // An empty subscription list is already reported by its own check.
  const subscriptions = m.eventSubscriptions ?? [];
  if ((m.commands ?? []).length > 0 && subscriptions.length > 0 && !subscriptions.some((s) => s.eventType === 'message.created')) {
    ctx.addIssue({
      code: 'custom',
      path: ['eventSubscriptions'],
      message: 'commands are matched on message events: subscribe to "message.created" or remove the commands',
      params: issueParams('manifest.commands.unreachable'),
    });
  }
}

function checkSettings(settings: z.infer<typeof SettingsSchema> | undefined, ctx: z.RefinementCtx): void {
  for (const [key, field] of Object.entries(settings?.configSchema ?? {})) {
    const path = ['settings', 'configSchema', key];
    const issue = (message: string, sub: string) =>
      ctx.addIssue({ code: 'custom', path: [...path, sub], message, params: issueParams('manifest.settings.invalid') });
    if (field.type === 'select' && (!field.options || field.options.length === 0)) {
      issue('a "select" field needs at least one entry in "options"', 'options');
    }
    if (field.type !== 'select' && field.options) issue('"options" is only for "select" fields', 'options');
    if (field.type === 'secret' && field.defaultValue !== undefined) {
      issue('a "secret" field cannot have a defaultValue; the operator enters it', 'defaultValue');
    }
    const d = field.defaultValue;
    if (d !== undefined) {
      const want = field.type === 'number' ? 'number' : field.type === 'boolean' ? 'boolean' : 'string';
      if (typeof d !== want) issue(`defaultValue of a "${field.type}" field must be a ${want}`, 'defaultValue');
      if (field.type === 'select' && field.options && !field.options.some((o) => o.value === d)) {
        issue('defaultValue must be the value of one of the options', 'defaultValue');
      }
    }
    if ((field.min !== undefined || field.max !== undefined) && field.type !== 'number' && field.type !== 'string') {
      issue('"min" and "max" apply to "number" (value) and "string" (length) fields only', 'min');
    }
  }
}

/**
 * `manifest.json` of a stdio plugin package. The JSON Schema in
 * `libs/protocol/schema/manifest.schema.json` is generated from this.
 */
export const StdioManifestSchema = z
  .strictObject({
    ...identityShape,
    sdkVersion: SemVer.describe('Version of the SDK the plugin was built with.'),
    transport: StdioTransportSchema,
    supportedPlatforms: z.array(SupportedPlatformSchema).optional().describe('Omitted means every platform.'),
    ...routingShape,
    concurrency: ConcurrencySchema.optional(),
    settings: SettingsSchema.optional(),
  })
  .superRefine((m, ctx) => {
    if (m.transport.type !== STDIO_TRANSPORT) {
      ctx.addIssue({
        code: 'custom',
        path: ['transport', 'type'],
        message:
          m.transport.type === HTTP_TRANSPORT
            ? 'an HTTP plugin is not installed from a ZIP: deploy the service and use "Register HTTP plugin" with its base URL'
            : `transport "${m.transport.type}" cannot be installed from a package; local packages must use "stdio-jsonrpc"`,
        params: issueParams('manifest.transport.unsupported'),
      });
    } else if (!m.transport.stdio) {
      ctx.addIssue({
        code: 'custom',
        path: ['transport', 'stdio'],
        message: 'add "transport.stdio" with at least "command" (and "args": ["--host-stdio"])',
        params: issueParams('manifest.field.required'),
      });
    }
    checkRouting(m, ctx);
    checkSettings(m.settings, ctx);
  });

/**
 * A validated stdio manifest, defaults applied. The schema keeps
 * `transport.stdio` optional only to report a wrong transport type first;
 * after validation it is always present.
 */
export type StdioManifest = Omit<z.output<typeof StdioManifestSchema>, 'transport'> & {
  transport: { type: typeof STDIO_TRANSPORT; stdio: StdioLaunch };
};
/** What an author writes (defaults optional). */
export type StdioManifestInput = z.input<typeof StdioManifestSchema>;
