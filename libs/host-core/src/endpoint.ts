import type {
  CancelReason,
  Command,
  Concurrency,
  EventSubscription,
  MessageEvent,
  OutgoingMessage,
  Permission,
  SendResult,
  Target,
} from '@host/protocol';
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
  /**
   * True when the plugin declared that it may intercept (stdio `messages.intercept`,
   * HTTP `InterceptMessages`): the dispatcher waits for its decision before
   * handing the event to later recipients, and honours `intercepted: true` only then.
   */
  canIntercept: boolean;
}

/** The decision of one plugin about one event: its ACK (stdio), its response (HTTP), or why there is none. */
export interface DeliveryOutcome {
  pluginId: string;
  accepted: boolean;
  intercepted: boolean;
  error: { code: string; message: string } | null;
  /** Something in the answer the endpoint ignored, such as an undeclared interception. */
  notice?: { code: string; message: string };
  durationMs: number;
}

/** How the work on an accepted event ended. */
export interface CompletionOutcome {
  /** null when the handler succeeded; the plugin's error, or a `delivery.*` code the host recorded. */
  error: { code: string; message: string } | null;
  /** How long the handler ran, as the plugin reported it. */
  durationMs?: number;
}

/**
 * One event handed to one endpoint: the decision first, the end of the work
 * later. Neither promise rejects.
 */
export interface Delivery {
  /** The ACK or HTTP response turned into an outcome, or the failure that replaced it. */
  readonly decision: Promise<DeliveryOutcome>;
  /**
   * Settles when the plugin is done with the event and its slot may be
   * reused: at once after a decline or a failure, after an accepted decision
   * when the plugin reports completion or exits. For HTTP, with the decision.
   */
  readonly completion: Promise<CompletionOutcome>;
  /** The dispatcher stopped waiting (no ACK in time, or the handler deadline passed): tell the plugin. Idempotent. */
  cancel(reason: CancelReason): void;
}

/** A message a plugin asked to send, before permission checks and rendering. */
export interface OutboundRequest {
  pluginId: string;
  /** `reply` answers `eventId` in its conversation; `send` goes to `target`. */
  kind: 'reply' | 'send';
  eventId?: string;
  target?: Target;
  message: OutgoingMessage;
  /**
   * A reply sent again from its record: an earlier process recorded it and may
   * have sent it before it stopped (it never marked it sent). A provider that
   * can tell a duplicate takes the platform's "sent before" answer as sent.
   */
  sentBefore?: true;
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
   * True while the endpoint cannot take events yet but is about to: a stdio
   * plugin starting, or waiting to restart after a crash within its budget.
   * Events routed meanwhile wait for it in its queue (until they expire)
   * instead of failing with `delivery.unavailable`. Absent: never.
   */
  isStarting?(): boolean;
  /**
   * True while the endpoint should take events but cannot: a stdio plugin
   * that failed (its crash budget ran out, or the host held it back after
   * dying with it). Events still name it as a recipient, and its delivery
   * fails at once with `delivery.unavailable`, so the event log shows that
   * it missed them. Absent: never.
   */
  isDown?(): boolean;
  /**
   * Delivers the event (already carrying this plugin's `command` match);
   * replies made meanwhile go to `sink`. Never throws: failures are in the
   * outcomes of the returned delivery.
   */
  deliver(event: MessageEvent, sink: OutboundSink): Delivery;
}

/**
 * A delivery whose one answer is decision and completion at once (an HTTP
 * response, an in-process handler): the plugin is done when it has answered.
 */
export function answeredDelivery(decision: Promise<DeliveryOutcome>): Delivery {
  return { decision, completion: decision.then(() => ({ error: null })), cancel: () => undefined };
}
