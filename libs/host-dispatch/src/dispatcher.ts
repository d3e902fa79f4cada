import type { DeliveryOutcome, PluginEndpoint, PluginRouting } from '@host/host-core';
import { DELIVERY_ERRORS, RUNTIME_DEFAULTS, type DeliveryErrorCode, type MessageEvent } from '@host/protocol';
import type { RendererRegistry } from '@host/messages';
import { EventLog, type DeliveryRecord, type EventRecord } from './event-log';
import { IsoTimeCache } from './iso-time';
import { HostOutboundSink } from './outbound-sink';
import { DEFAULT_CONCURRENCY, PluginQueue } from './plugin-queue';
import { ProviderRegistry } from './provider';
import { selectRecipients, type Recipient } from './routing';

export interface DispatcherOptions {
  /** Every plugin endpoint of every transport; called once per event. */
  endpoints: () => Iterable<PluginEndpoint>;
  events?: EventLog;
  providers?: ProviderRegistry;
  renderers?: RendererRegistry;
  /** Provider of messages.send (targets carry no provider). */
  defaultProvider?: string;
  /** ACK timeout when the endpoint's routing sets none. */
  requestTimeoutMilliseconds?: number;
  now?: () => number;
}

/**
 * Routes each message event to the plugins that take it (docs/protocol/v2.md,
 * "Routing"): one at a time, in priority order, through each plugin's bounded
 * queue, until every recipient answered or one intercepted. Transport-neutral:
 * it sees only PluginEndpoints.
 */
export class Dispatcher {
  readonly events: EventLog;
  readonly providers: ProviderRegistry;
  readonly sink: HostOutboundSink;
  private readonly queues = new Map<string, PluginQueue>();
  private readonly timeout: number;
  private readonly clock = new IsoTimeCache();

  constructor(private readonly o: DispatcherOptions) {
    this.events = o.events ?? new EventLog();
    this.providers = o.providers ?? new ProviderRegistry();
    this.timeout = o.requestTimeoutMilliseconds ?? RUNTIME_DEFAULTS.requestTimeoutMilliseconds;
    this.sink = new HostOutboundSink({
      events: this.events,
      providers: this.providers,
      permissionsOf: (id) => this.routingOf(id)?.permissions,
      ...(o.defaultProvider ? { defaultProvider: o.defaultProvider } : {}),
      ...(o.renderers ? { renderers: o.renderers } : {}),
      ...(o.now ? { now: o.now } : {}),
    });
  }

  routingOf(pluginId: string): PluginRouting | undefined {
    for (const e of this.o.endpoints()) if (e.pluginId === pluginId) return e.routing();
    return undefined;
  }

  /** Queue occupancy per plugin, for health views. */
  queueStats(): { pluginId: string; active: number; waiting: number }[] {
    return [...this.queues].map(([pluginId, q]) => ({ pluginId, ...q.stats }));
  }

  /** Delivers one event and resolves with its record once every chosen plugin answered or failed. */
  async dispatch(event: MessageEvent): Promise<EventRecord> {
    // The event as received, without any command a caller left on it (each recipient gets its own).
    const base = event.command === undefined ? event : withoutCommand(event);
    const recipients = selectRecipients(base, this.o.endpoints());
    const record: EventRecord = {
      eventId: event.eventId,
      source: event.source,
      receivedAt: this.clock.at(Date.now()),
      completedAt: null,
      event: base,
      recipients: recipients.map((r) => r.endpoint.pluginId),
      deliveries: [],
      outbound: [],
      interceptedBy: null,
      replySequence: 0,
    };
    this.events.add(record);
    for (const recipient of recipients) {
      const outcome = await this.deliverTo(record, recipient, base);
      if (outcome.intercepted) {
        record.interceptedBy = recipient.endpoint.pluginId;
        break;
      }
    }
    record.completedAt = this.clock.at(Date.now());
    this.events.publish({ type: 'completed', record });
    return record;
  }

  private async deliverTo(record: EventRecord, r: Recipient, base: MessageEvent): Promise<DeliveryOutcome> {
    const { endpoint, routing } = r;
    const pluginId = endpoint.pluginId;
    const delivery: DeliveryRecord = {
      pluginId,
      transport: endpoint.transport,
      ...(r.command ? { command: r.command } : {}),
      startedAt: this.clock.at(Date.now()),
      sent: false,
      done: false,
      accepted: false,
      intercepted: false,
      error: null,
      durationMs: null,
    };
    // Recorded before hand-over: a plugin may reply before it acknowledges.
    record.deliveries.push(delivery);
    const started = performance.now();
    const event: MessageEvent = r.command ? { ...base, command: r.command } : base;
    const queue = this.queueOf(pluginId, routing);
    const fail = (code: DeliveryErrorCode, detail?: string): DeliveryOutcome => ({
      pluginId,
      accepted: false,
      intercepted: false,
      error: { code, message: detail ?? DELIVERY_ERRORS[code].message },
      durationMs: performance.now() - started,
    });
    const timeoutMs = routing.requestTimeoutMilliseconds ?? this.timeout;
    const outcome = await queue.submit(
      () => {
        delivery.sent = true;
        return this.deliverWithin(endpoint, event, timeoutMs, fail);
      },
      (why) => fail(why),
    );
    delivery.done = true;
    delivery.accepted = outcome.accepted;
    delivery.intercepted = outcome.intercepted;
    delivery.error = outcome.error;
    delivery.durationMs = performance.now() - started;
    this.events.publish({ type: 'delivery', record });
    return outcome;
  }

  /** The endpoint's outcome, or `delivery.timeout` when it takes longer than the ACK timeout. */
  private deliverWithin(
    endpoint: PluginEndpoint,
    event: MessageEvent,
    timeoutMs: number,
    fail: (code: DeliveryErrorCode, detail?: string) => DeliveryOutcome,
  ): Promise<DeliveryOutcome> {
    // One promise settled by whichever comes first (fewer allocations per event than race + finally).
    return new Promise<DeliveryOutcome>((resolve) => {
      const timer = setTimeout(
        () => resolve(fail('delivery.timeout', `${endpoint.pluginId} did not acknowledge within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const failed = (e: unknown) => {
        clearTimeout(timer);
        resolve(fail('delivery.failed', e instanceof Error ? e.message : String(e)));
      };
      try {
        endpoint.deliver(event, this.sink).then((outcome) => {
          clearTimeout(timer);
          resolve(outcome);
        }, failed);
      } catch (e) {
        failed(e);
      }
    });
  }

  private queueOf(pluginId: string, routing: PluginRouting): PluginQueue {
    let q = this.queues.get(pluginId);
    if (!q) {
      q = new PluginQueue(routing.concurrency ?? DEFAULT_CONCURRENCY);
      this.queues.set(pluginId, q);
    } else if (routing.concurrency) {
      q.setLimits(routing.concurrency);
    }
    return q;
  }
}

function withoutCommand(event: MessageEvent): MessageEvent {
  const { command: _ignored, ...base } = event;
  return base;
}
