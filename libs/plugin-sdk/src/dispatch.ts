import type { EventAck, MessageEvent, PluginError } from '@host/protocol';
import { createMessageContext, type MessageHandler, type Session, type TransportIO } from './context';
import type { Plugin } from './define-plugin';
import { HandlerError, PluginMessageError, PluginSdkError } from './errors';

/** Code reported when a handler throws something other than a HandlerError. */
export const HANDLER_FAILED_CODE = 'plugin.handler_failed';

/** Which handler takes the event: the command's handler, else onMessage. */
export function handlerFor(plugin: Plugin, event: MessageEvent): MessageHandler | undefined {
  const commands = plugin.definition.commands ?? {};
  const name = event.command?.name;
  if (name !== undefined && Object.prototype.hasOwnProperty.call(commands, name)) return commands[name];
  return plugin.definition.onMessage;
}

/** The error object of an ACK or HTTP response for a thrown value. */
export function toPluginError(error: unknown): PluginError {
  const clip = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n - 3)}...`);
  if (error instanceof HandlerError) {
    return { code: clip(error.code || HANDLER_FAILED_CODE, 100), message: clip(error.message, 2000), ...(error.details !== undefined ? { details: error.details } : {}) };
  }
  if (error instanceof PluginMessageError || error instanceof PluginSdkError) return { code: error.code, message: clip(error.message, 2000) };
  const message = error instanceof Error ? error.message : String(error);
  return { code: HANDLER_FAILED_CODE, message: clip(message || 'the handler failed', 2000) };
}

/**
 * Runs the handler of one event and builds its ACK. This is the one dispatch
 * path of every transport (stdio, HTTP and the test host). The ACK is built
 * after the handler returned and every message it started has settled, so
 * replies are always sent before the acknowledgement.
 *
 * accepted: true when a handler ran to completion; false when none applies
 * (error null) or it threw (error set).
 */
export async function dispatchEvent(plugin: Plugin, event: MessageEvent, io: TransportIO, session: Session): Promise<EventAck> {
  const handler = handlerFor(plugin, event);
  if (!handler) return { eventId: event.eventId, accepted: false, intercepted: false, error: null };
  const run = createMessageContext(event, io, session);
  try {
    await handler(run.ctx);
    await run.settle();
    return { eventId: event.eventId, accepted: true, intercepted: run.intercepted(), error: null };
  } catch (error) {
    await run.settle();
    const reported = toPluginError(error);
    io.log('error', `handler for ${event.command ? `command "${event.command.name}"` : 'message'} ${event.eventId} failed: ${reported.message}`, {
      code: reported.code,
      ...(error instanceof Error && error.stack ? { stack: error.stack } : {}),
    });
    return { eventId: event.eventId, accepted: false, intercepted: run.intercepted(), error: reported };
  }
}
