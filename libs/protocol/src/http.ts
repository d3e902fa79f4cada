import { z } from 'zod';
import { PluginErrorSchema } from './event';
import { LIMITS } from './limits';
import { KeyboardSchema, MessageFormat, MessagePartSchema, TargetSchema } from './message';

/** Paths of the two endpoints an HTTP plugin serves, relative to its base URL. */
export const HTTP_PATHS = {
  manifest: '/host/plugin/manifest',
  messageEvents: '/host/plugin/events/message',
  /** Events of the other types the plugin subscribes to (the ChatEvent body); answered with the message response. */
  otherEvents: '/host/plugin/events/deliver',
} as const;

/**
 * Headers the host sets on every request to an HTTP plugin. The signature is
 * `v1=` + hex HMAC-SHA256(secret, `${timestamp}.${deliveryId}.${rawBody}`),
 * where the secret is the one shown once at registration.
 */
export const HTTP_HEADERS = {
  timestamp: 'x-host-timestamp',
  deliveryId: 'x-host-delivery-id',
  signature: 'x-host-signature',
  pluginId: 'x-host-plugin-id',
  protocolVersion: 'x-host-protocol-version',
} as const;

export const SIGNATURE_VERSION = 'v1';

/** The string the host signs; both sides must build it byte for byte the same. */
export function signingPayload(timestamp: string, deliveryId: string, rawBody: string): string {
  return `${timestamp}.${deliveryId}.${rawBody}`;
}

/**
 * One item of `outboundMessages`. Without `target` it is a reply to the event
 * (needs `messages.reply`); with a target other than the event's conversation
 * it is a send (needs `messages.send` and the SendMessages capability).
 */
export const OutboundMessageSchema = z.strictObject({
  target: TargetSchema.optional(),
  format: MessageFormat.default('text'),
  parts: z.array(MessagePartSchema),
  keyboard: KeyboardSchema.optional(),
});
export type OutboundMessage = z.output<typeof OutboundMessageSchema>;

/** `ModernPluginMessageResponse`: the body an HTTP plugin returns for an event. */
export const MessageResponseSchema = z.object({
  accepted: z.boolean(),
  intercepted: z.boolean(),
  outboundMessages: z.array(OutboundMessageSchema).max(LIMITS.maxOutboundMessages),
  error: PluginErrorSchema.nullable(),
});
export type MessageResponse = z.output<typeof MessageResponseSchema>;
export type ModernPluginMessageResponse = MessageResponse;
