import type { Command, Concurrency, EventSubscription, MessageEvent, OutgoingMessage, Permission, SendResult, Target } from '@host/protocol';
import type { Transport } from './records';

/** What the dispatcher needs to route an event to a plugin. */
export interface PluginRouting {
  pluginId: string;
  eventSubscriptions: EventSubscription[];
  commands: Command[];
  permissions: Permission[];
  /** Queue limits of this plugin; the dispatcher applies the protocol defaults when absent. */
  concurrency?: Concurrency;
  /** How long the dispatcher waits for the ACK before recording `delivery.timeout`. */
  requestTimeoutMilliseconds?: number;
}

/** The outcome of delivering one event to one plugin. */
export interface DeliveryOutcome {
  pluginId: string;
  accepted: boolean;
  intercepted: boolean;
  error: { code: string; message: string } | null;
  durationMs: number;
}

/** A message a plugin asked to send, before permission checks and rendering. */
export interface OutboundRequest {
  pluginId: string;
  /** `reply` answers `eventId` in its conversation; `send` goes to `target`. */
  kind: 'reply' | 'send';
  eventId?: string;
  target?: Target;
  message: OutgoingMessage;
}

/**
 * Where plugins' messages go: checks permissions, normalises and renders for
 * the provider, and sends. Rejections throw a HostError-like error with a
 * `message.*` code, which the transport returns to the plugin.
 */
export interface OutboundSink {
  send(request: OutboundRequest): Promise<SendResult>;
}

/**
 * One plugin as the dispatcher sees it, whatever its transport. The stdio
 * runtime and the HTTP transport each implement it.
 */
export interface PluginEndpoint {
  readonly pluginId: string;
  readonly transport: Transport;
  routing(): PluginRouting;
  /** True when the endpoint can take events now (running / not circuit-open). */
  isAvailable(): boolean;
  /**
   * Delivers the event (already carrying this plugin's `command` match) and
   * resolves with the ACK; replies made meanwhile go to `sink`. Never rejects:
   * failures are in `outcome.error`.
   */
  deliver(event: MessageEvent, sink: OutboundSink): Promise<DeliveryOutcome>;
}
