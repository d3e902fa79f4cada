import {
  Capability,
  PluginId,
  parseHttpManifest,
  parseStdioManifest,
  type HttpManifest,
  type StdioManifest,
  type ValidationIssue,
} from '@host/protocol';
import type { LifecycleContext, MessageHandler } from './context';
import { PluginSdkError } from './errors';
import type { ChatEventHandler, InteractionHandler } from './rich';
import { runStdio, type StdioOptions } from './stdio/runtime';
import { SDK_VERSION } from './version';

/**
 * A manifest as authors hold it: usually `import manifest from '../manifest.json'`.
 * It is validated with the protocol's schema when the plugin is defined.
 */
export type ManifestSource = { readonly pluginId: string; readonly [field: string]: unknown };

/** A validated manifest: the stdio `manifest.json`, or an HTTP manifest for a plugin that is only served over HTTP. */
export type PluginManifest = StdioManifest | HttpManifest;

/**
 * Everything a plugin is. The same definition runs over stdio
 * (`plugin.main()`) and over HTTP (`createHttpHandler(plugin, ...)`).
 */
export interface PluginDefinition {
  /**
   * The plugin's manifest (recommended): enables the SDK's permission checks,
   * checks that every command handler has a manifest command, and supplies
   * name, version and author to the HTTP manifest.
   */
  readonly manifest?: ManifestSource;
  /** The plugin id, when no manifest is given (stdio only; HTTP needs a manifest). */
  readonly pluginId?: string;
  /**
   * Handles every message event that no command handler takes: messages that
   * matched no command (the plugin observes them) and commands without a handler.
   */
  readonly onMessage?: MessageHandler;
  /**
   * Command handlers by manifest command name. The host matches prefixes and
   * aliases (`/echo`, `!e`) and names the command in the event; the SDK calls
   * the handler of that name with `ctx.command` set.
   */
  readonly commands?: Readonly<Record<string, MessageHandler>>;
  /**
   * Handles `interaction.created`: a user clicked a callback button of a keyboard the plugin sent
   * (`ctx.interaction.data` is the button's data). The host has already acknowledged the click to the
   * platform; answer with `ctx.reply`. The manifest must subscribe to "interaction.created".
   */
  readonly onInteraction?: InteractionHandler;
  /** Handles `bot.added`: the bot joined a group or a user added it. The manifest must subscribe to "bot.added". */
  readonly onBotAdded?: ChatEventHandler;
  /** Handles `bot.removed`: the bot left a group or a user removed it; nothing can be sent there any more. */
  readonly onBotRemoved?: ChatEventHandler;
  /** Handles `conversation.opened`: a conversation accepts the bot's messages again. */
  readonly onConversationOpened?: ChatEventHandler;
  /**
   * Runs once after the host initialized the plugin (stdio) or before the
   * first request is served (HTTP). Events wait until it finishes; a throw
   * stops the plugin (exit code 1 on stdio).
   */
  readonly onStart?: (ctx: LifecycleContext) => void | Promise<void>;
  /**
   * Runs when an operator changed the settings of the running plugin (stdio:
   * the host's `settings.changed`). `ctx.settings` holds the new values,
   * `previous` the old ones. When it returns, handlers see the new values;
   * when it throws, the plugin keeps the old ones and the operator is told
   * to restart it (the error message is shown). Without it, new values simply
   * replace the old.
   */
  readonly onSettingsChanged?: (ctx: LifecycleContext, previous: Readonly<Record<string, unknown>>) => void | Promise<void>;
  /** Runs when the plugin stops, after in-flight events finished. */
  readonly onStop?: (ctx: LifecycleContext) => void | Promise<void>;
  /**
   * Set when handlers may call `ctx.intercept()` to stop the plugins after
   * this one from seeing the message. On stdio the manifest must then declare
   * the `messages.intercept` permission (definePlugin and the runtime refuse
   * to start otherwise, `SDK_INTERCEPT_PERMISSION_MISSING`); the HTTP
   * manifest declares InterceptMessages. The host waits for an intercepting
   * plugin's decision before it delivers to the plugins after it, so decide
   * early with `ctx.intercept()` or `ctx.pass()`; without `intercepts` the
   * SDK sends the decision before the handler even runs.
   */
  readonly intercepts?: boolean;
}

/** A defined plugin: run it with `main()` (stdio) or serve it with `createHttpHandler` (HTTP). */
export interface Plugin {
  readonly pluginId: string;
  /** The validated manifest, when the definition has one. */
  readonly manifest: PluginManifest | undefined;
  readonly definition: PluginDefinition;
  /**
   * Runs the plugin over stdio. With `--host-stdio` in the arguments it
   * speaks the protocol on stdin/stdout until the host stops it; without it,
   * it prints help to stderr and exits with code 2. Resolves with the exit
   * code (after the process exit hook ran).
   */
  main(options?: StdioOptions): Promise<number>;
  /**
   * The manifest served at `GET /host/plugin/manifest`. Capabilities are
   * computed: ReceiveMessages and HttpTransport always, InterceptMessages
   * when `intercepts` is set, SendMessages when the manifest permits
   * `messages.send`.
   */
  httpManifest(): HttpManifest;
}

function fail(detail: string): never {
  throw new PluginSdkError('SDK_DEFINITION_INVALID', detail);
}

function describeIssues(issues: readonly ValidationIssue[]): string {
  return issues.map((i) => `  - ${i.code}${i.path ? ` at ${i.path}` : ''}: ${i.message}`).join('\n');
}

/**
 * Validates a manifest with the protocol's schema; throws PluginSdkError
 * SDK_MANIFEST_INVALID carrying every issue. `kind` forces the schema; left
 * out (a manifest given to definePlugin), a manifest with `transport` is a
 * stdio manifest and one without is an HTTP plugin's, whose `capabilities`
 * may be left out because the SDK computes them.
 */
export function resolveManifest(source: unknown, kind?: 'stdio' | 'http'): PluginManifest {
  const isObject = typeof source === 'object' && source !== null && !Array.isArray(source);
  const stdio = kind ? kind === 'stdio' : isObject && 'transport' in source;
  let input = source;
  if (!kind && !stdio && isObject && !('capabilities' in source)) {
    const permissions = (source as { permissions?: unknown }).permissions;
    const sends = Array.isArray(permissions) && permissions.includes('messages.send');
    input = { ...source, capabilities: Capability.ReceiveMessages | Capability.HttpTransport | (sends ? Capability.SendMessages : 0) };
  }
  const result = stdio ? parseStdioManifest(input) : parseHttpManifest(input);
  if (!result.ok) {
    const id = isObject ? String((source as { pluginId?: unknown }).pluginId) : '?';
    throw new PluginSdkError(
      'SDK_MANIFEST_INVALID',
      `The ${stdio ? 'stdio' : 'HTTP'} manifest of "${id}" is invalid:\n${describeIssues(result.issues)}\n`,
      result.issues,
    );
  }
  return result.value;
}

/** The handler of each event type other than message.created, by definition key. */
export const CHAT_HANDLERS = {
  onInteraction: 'interaction.created',
  onBotAdded: 'bot.added',
  onBotRemoved: 'bot.removed',
  onConversationOpened: 'conversation.opened',
} as const;

function checkHandlers(def: PluginDefinition, manifest: PluginManifest | undefined): void {
  for (const key of ['onMessage', 'onStart', 'onStop', 'onSettingsChanged', ...Object.keys(CHAT_HANDLERS)] as const) {
    const value = (def as unknown as Record<string, unknown>)[key];
    if (value !== undefined && typeof value !== 'function') fail(`"${key}" must be a function.`);
  }
  if (def.intercepts !== undefined && typeof def.intercepts !== 'boolean') fail('"intercepts" must be true or false.');
  const commands = def.commands ?? {};
  if (typeof commands !== 'object' || commands === null) fail('"commands" must be an object of handlers keyed by command name.');
  for (const [name, handler] of Object.entries(commands)) {
    if (typeof handler !== 'function') fail(`commands.${name} must be a function (ctx) => ...`);
  }
  if (!manifest) return;
  if (def.intercepts && 'transport' in manifest && !manifest.permissions.includes('messages.intercept')) {
    throw new PluginSdkError(
      'SDK_INTERCEPT_PERMISSION_MISSING',
      `"intercepts" is true but manifest.json of "${manifest.pluginId}" does not declare "messages.intercept"; add it to "permissions" (or remove "intercepts").`,
    );
  }
  for (const [key, eventType] of Object.entries(CHAT_HANDLERS)) {
    if ((def as unknown as Record<string, unknown>)[key] === undefined) continue;
    if (!manifest.eventSubscriptions.some((s) => s.eventType === eventType)) {
      fail(
        `"${key}" handles ${eventType} events, which the manifest does not subscribe to; add {"eventType": "${eventType}"} to "eventSubscriptions".`,
      );
    }
  }
  const declared = manifest.commands;
  for (const name of Object.keys(commands)) {
    if (declared.some((c) => c.name === name)) continue;
    const near = declared.find(
      (c) => c.name.toLowerCase() === name.toLowerCase() || c.aliases.some((a) => a.toLowerCase() === name.toLowerCase()),
    );
    fail(
      near
        ? `commands.${name} matches no manifest command name; key handlers by the command's "name": use commands["${near.name}"].`
        : `commands.${name} has no command in the manifest; add {"name": "${name}", "prefixes": ["/"]} to "commands" in manifest.json or remove the handler.`,
    );
  }
  if (!def.onMessage) {
    const unhandled = declared.filter((c) => !(c.name in commands)).map((c) => c.name);
    if (unhandled.length > 0) {
      fail(
        `manifest command(s) ${unhandled.map((n) => `"${n}"`).join(', ')} have no handler; add commands.${unhandled[0]} or an onMessage handler.`,
      );
    }
  }
}

/** HTTP capability flags of a plugin, computed from its definition and manifest. */
export function capabilitiesOf(def: PluginDefinition, manifest: PluginManifest | undefined): number {
  let flags = Capability.ReceiveMessages | Capability.HttpTransport;
  if (def.intercepts) flags |= Capability.InterceptMessages;
  if (manifest?.permissions.includes('messages.send')) flags |= Capability.SendMessages;
  if (manifest && 'capabilities' in manifest) flags |= manifest.capabilities;
  return flags;
}

/**
 * Defines a plugin once for both transports. Checks the definition and the
 * manifest immediately and throws PluginSdkError with the fix when something
 * is wrong, so mistakes show at start-up, not at the first message.
 *
 * @example
 * ```ts
 * import { definePlugin } from '@host/plugin-sdk-v2';
 *
 * const plugin = definePlugin({
 *   manifest: {
 *     pluginId: 'com.example.echo',
 *     name: 'Echo',
 *     version: '1.0.0',
 *     author: 'Example',
 *     protocolVersion: 2,
 *     sdkVersion: '2.0.0',
 *     transport: { type: 'stdio-jsonrpc', stdio: { command: 'node', args: ['dist/index.js', '--host-stdio'] } },
 *     eventSubscriptions: [{ eventType: 'message.created' }],
 *     permissions: ['messages.reply'],
 *     commands: [{ name: 'echo', prefixes: ['/'] }],
 *   },
 *   commands: {
 *     async echo(ctx) {
 *       await ctx.replyMarkdown(ctx.at.user(ctx.sender), ' said: ', ctx.args);
 *     },
 *   },
 * });
 *
 * void plugin.main();
 * ```
 */
export function definePlugin(definition: PluginDefinition): Plugin {
  if (typeof definition !== 'object' || definition === null)
    fail('definePlugin() takes an object: { manifest, commands, onMessage, ... }.');
  const manifest = definition.manifest === undefined ? undefined : resolveManifest(definition.manifest);
  const pluginId = manifest?.pluginId ?? definition.pluginId;
  if (pluginId === undefined) fail('give "manifest" (recommended: import manifest.json) or "pluginId".');
  if (manifest && definition.pluginId !== undefined && definition.pluginId !== manifest.pluginId) {
    fail(`"pluginId" is "${definition.pluginId}" but the manifest says "${manifest.pluginId}"; remove "pluginId" or make them equal.`);
  }
  const idCheck = PluginId.safeParse(pluginId);
  if (!idCheck.success) fail(`pluginId "${String(pluginId)}" ${idCheck.error.issues[0]?.message ?? 'is invalid'}.`);
  checkHandlers(definition, manifest);
  const capabilities = capabilitiesOf(definition, manifest);

  const plugin: Plugin = {
    pluginId,
    manifest,
    definition,
    main: (options) => runStdio(plugin, options),
    httpManifest(): HttpManifest {
      if (!manifest) {
        throw new PluginSdkError(
          'SDK_HTTP_CONFIG_INVALID',
          'An HTTP plugin serves a manifest with name, version and author: pass "manifest" to definePlugin() instead of only "pluginId".',
        );
      }
      const served = {
        pluginId: manifest.pluginId,
        name: manifest.name,
        version: manifest.version,
        author: manifest.author,
        ...(manifest.description !== undefined ? { description: manifest.description } : {}),
        protocolVersion: manifest.protocolVersion,
        sdkVersion: SDK_VERSION,
        capabilities,
        eventSubscriptions: manifest.eventSubscriptions,
        permissions: manifest.permissions,
        commands: manifest.commands,
        ...(manifest.settings ? { settings: manifest.settings } : {}),
      };
      const checked = parseHttpManifest(served);
      if (!checked.ok)
        throw new PluginSdkError(
          'SDK_MANIFEST_INVALID',
          `The HTTP manifest built from the plugin is invalid:\n${describeIssues(checked.issues)}\n`,
          checked.issues,
        );
      return checked.value;
    },
  };
  return Object.freeze(plugin);
}
