import type { EventAck, HandlerErrorCode, MessageEvent, PluginError } from '@host/protocol';
import { createMessageContext, type MessageHandler, type Session, type TransportIO } from './context';
import { CHAT_HANDLERS, type Plugin } from './define-plugin';
import { chatEventOf, type EventContext } from './rich';
import { HandlerError, PluginMessageError, PluginSdkError } from './errors';

/** Code reported when a handler throws something other than a HandlerError. */
export const HANDLER_FAILED_CODE = 'plugin.handler_failed' satisfies HandlerErrorCode;

/**
 * Which handler takes the event: for an event of another type than message.created, the handler of its type
 * (onInteraction, onBotAdded, ...), given the event's own context; else the command's handler, else onMessage.
 */
export function handlerFor(plugin: Plugin, event: MessageEvent): MessageHandler | undefined {
  const chat = chatEventOf(event);
  if (chat) {
    const key = (Object.keys(CHAT_HANDLERS) as (keyof typeof CHAT_HANDLERS)[]).find((k) => CHAT_HANDLERS[k] === chat.eventType);
    const handler = key === undefined ? undefined : (plugin.definition[key] as ((ctx: EventContext) => void | Promise<void>) | undefined);
    if (!handler) return undefined;
    // The message context without its message members, plus the event (and the click); getters stay live.
    return (ctx) =>
      handler(
        Object.create(ctx, {
          event: { value: chat, enumerable: true },
          ...(chat.interaction ? { interaction: { value: chat.interaction, enumerable: true } } : {}),
          message: { value: undefined },
          text: { value: undefined },
          args: { value: undefined },
          command: { value: undefined },
        }) as EventContext,
      );
  }
  const commands = plugin.definition.commands ?? {};
  const name = event.command?.name;
  if (name !== undefined && Object.prototype.hasOwnProperty.call(commands, name)) return commands[name];
  return plugin.definition.onMessage;
}

/** The error object of an ACK or HTTP response for a thrown value. */
export function toPluginError(error: unknown): PluginError {
  const clip = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n - 3)}...`);
  if (error instanceof HandlerError) {
    return {
      code: clip(error.code || HANDLER_FAILED_CODE, 100),
      message: clip(error.message, 2000),
      ...(error.details !== undefined ? { details: error.details } : {}),
    };
  }
  if (error instanceof PluginMessageError || error instanceof PluginSdkError)
    return { code: error.code, message: clip(error.message, 2000) };
  const message = error instanceof Error ? error.message : String(error);
  return { code: HANDLER_FAILED_CODE, message: clip(message || 'the handler failed', 2000) };
}

/** How the handler of an accepted event ended: what `events.completed` reports. */
export interface EventCompletion {
  /** null when the handler returned, else its failure (see toPluginError). */
  readonly error: PluginError | null;
  /** How long the handler ran, until every message it started settled. */
  readonly durationMs: number;
}

/** What one dispatch needs besides the event. */
export interface DispatchOptions {
  /**
   * Receives the event's decision (the ACK), once and synchronously when it
   * is made: before the handler runs for a plugin that cannot intercept, on
   * ctx.intercept()/ctx.pass() or the handler's end for one that can.
   */
  readonly onAck: (ack: EventAck) => void;
  /** The event's cancellation signal, given to the handler as ctx.signal (default: the session's). */
  readonly signal?: AbortSignal;
}

/**
 * Runs the handler of one event: the one dispatch path of every transport
 * (stdio, HTTP and the test host). The decision and the work are apart
 * (docs/protocol/v2.md 4.2, 5.3):
 *
 * - no handler applies: ACK `accepted: false` at once, resolves null;
 * - a plugin without `intercepts`: ACK `{accepted: true, intercepted: false}`
 *   before the handler runs;
 * - a plugin with `intercepts`: ACK on ctx.intercept() or ctx.pass(), or when
 *   the handler returns (not intercepted); a handler that throws before
 *   deciding declines the event (`accepted: false` with the error) and
 *   resolves null, as nothing took it.
 *
 * Resolves with the completion of an accepted event once the handler ended
 * and every message it started settled; never rejects.
 */
export async function dispatchEvent(
  plugin: Plugin,
  event: MessageEvent,
  io: TransportIO,
  session: Session,
  options: DispatchOptions,
): Promise<EventCompletion | null> {
  const handler = handlerFor(plugin, event);
  if (!handler) {
    options.onAck({ eventId: event.eventId, accepted: false, intercepted: false, error: null });
    return null;
  }
  let acked = false;
  const ack = (value: EventAck) => {
    if (acked) return;
    acked = true;
    options.onAck(value);
  };
  const accept = (intercepted: boolean) => ack({ eventId: event.eventId, accepted: true, intercepted, error: null });
  if (!session.intercepts) accept(false);
  const run = createMessageContext(event, io, session, { signal: options.signal, onDecision: accept });
  const started = performance.now();
  let error: PluginError | null = null;
  try {
    await handler(run.ctx);
  } catch (thrown) {
    error = toPluginError(thrown);
    io.log(
      'error',
      `handler for ${event.command ? `command "${event.command.name}"` : (chatEventOf(event)?.eventType ?? 'message')} ${event.eventId} failed: ${error.message}`,
      {
        code: error.code,
        ...(thrown instanceof Error && thrown.stack ? { stack: thrown.stack } : {}),
      },
      event.eventId,
    );
  }
  const declined = !acked && error !== null;
  if (declined) ack({ eventId: event.eventId, accepted: false, intercepted: false, error });
  else accept(false);
  await run.settle();
  return declined ? null : { error, durationMs: Math.max(0, performance.now() - started) };
}
