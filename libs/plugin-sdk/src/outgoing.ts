import { getRenderer, normalizeMessage, parseTarget, renderParsedMessage, type NormalizedMessage, type ProviderBody } from '@host/messages';
import type { Keyboard, MessageFormat, Permission, Target } from '@host/protocol';
import { PluginMessageError } from './errors';
import { toParts, type PartInput } from './parts';

/** A message checked and normalised exactly as the host will, ready for the wire. */
export interface PreparedMessage {
  message: NormalizedMessage;
  target: Target;
  /** The provider body the host will send, e.g. `{msg_type: 2, markdown: {content}}`. */
  body: ProviderBody;
}

/** The renderer whose rules apply: the event's provider when built in, else QQ Bot (the strictest built-in rules). */
export function providerFor(source: string | undefined): string {
  return source !== undefined && getRenderer(source) ? source : 'qqbot';
}

/**
 * Normalises and validates an outgoing message before it leaves the plugin,
 * with the same code as the host (@host/messages), so a mistake surfaces as
 * a PluginMessageError in the handler that made it instead of a refusal later.
 * `permissions` is the manifest's list when known; `need` is the permission
 * the call itself requires.
 */
export function prepareMessage(args: {
  format: MessageFormat;
  parts: readonly PartInput[];
  keyboard?: Keyboard;
  target: Target;
  provider: string;
  permissions: readonly string[] | undefined;
  need: Permission;
}): PreparedMessage {
  const { format, permissions } = args;
  const checked = parseTarget(args.target);
  if (!checked.ok) throw new PluginMessageError(checked.error.code, checked.error.message, { target: args.target });
  const target = checked.value;
  if (permissions && !permissions.includes(args.need)) {
    throw new PluginMessageError(
      'message.permission.denied',
      `This needs the "${args.need}" permission, which manifest.json does not declare. Add "${args.need}" to "permissions" and reinstall the plugin.`,
      { target },
    );
  }
  const normalized = normalizeMessage({ format, parts: toParts(args.parts), ...(args.keyboard ? { keyboard: args.keyboard } : {}) });
  if (!normalized.ok) throw new PluginMessageError(normalized.error.code, normalized.error.message, { target });
  if (
    permissions &&
    !permissions.includes('messages.mentionEveryone') &&
    normalized.value.parts.some((p) => p.type === 'mention' && p.target === 'everyone')
  ) {
    throw new PluginMessageError(
      'message.permission.denied',
      'at.everyone() needs the "messages.mentionEveryone" permission, which manifest.json does not declare. Add it to "permissions" and reinstall, or remove the mention.',
      { target },
    );
  }
  const rendered = renderParsedMessage(args.provider, normalized.value, target);
  if (!rendered.ok) throw new PluginMessageError(rendered.error.code, rendered.error.message, { target });
  return { message: normalized.value, target, body: rendered.value };
}
