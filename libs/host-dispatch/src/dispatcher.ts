import {
  HostError,
  type EventInbox,
  type CompletionOutcome,
  type Delivery,
  type DeliveryOutcome,
  type OutboundSink,
  type PluginEndpoint,
  type PluginRouting,
} from '@host/host-core';
import { concurrencyOf, DELIVERY_ERRORS, LIMITS, RUNTIME_DEFAULTS, type DeliveryErrorCode, type MessageEvent } from '@host/protocol';
import type { RendererRegistry } from '@host/messages';
import { EventLog, type DeliveryRecord, type EventRecord } from './event-log';
import { IsoTimeCache } from './iso-time';
import { HostOutboundSink, type OutboundSinkOptions } from './outbound-sink';
import { PluginQueue, type QueueRefusal, type QueueStats } from './plugin-queue';
import { ProviderRegistry } from './provider';
import { ReplyReferences } from './reply-references';
import { selectRecipients, waitsForStart, type Recipient } from './routing';

export interface DispatcherOptions {
  /** Every plugin endpoint of every transport; called once per event. */
  endpoints: () => Iterable<PluginEndpoint>;
  events?: EventLog;
  /** What replies are checked against (default: the default bounds of ReplyReferences). */
  replies?: ReplyReferences;
  providers?: ProviderRegistry;
  renderers?: RendererRegistry;
  /** ACK timeout when the endpoint's routing sets none. */
  requestTimeoutMilliseconds?: number;
  now?: () => number;
  /**
   * What endpoints get to send replies through: the host's sink as is
   * (default), or a wrapper of it (replicas record each reply before it is sent).
   */
  outbound?: (sink: HostOutboundSink) => OutboundSink;
  /** See OutboundSinkOptions.observe. */
  observeOutbound?: OutboundSinkOptions['observe'];
  /**
   * Deliveries that may wait for their plugins at once, host-wide: past it,
   * new events are refused before they are accepted (default
   * {@link DEFAULT_MAX_WAITING_EVENTS}).
   */
  maxWaitingEvents?: number;
  /** Called for each event refused at admission, with why (the host logs it, rate-limited). */
  onRefused?: (event: MessageEvent, refusal: Refusal) => void;
  /**
   * Where an accepted event is kept until its record is logged final: {@link take}
   * routes it only once it is there; what a previous run left there is routed
   * again with {@link resume}. Without it, an accepted event lives in memory only.
   */
  inbox?: EventInbox;
}

/** Deliveries waiting for plugins host-wide before new events are refused (HOST_MAX_WAITING_EVENTS). */
export const DEFAULT_MAX_WAITING_EVENTS = 10_000;

/** Why an event was not accepted: it was neither recorded nor delivered, and its sender may send it again. */
export interface Refusal {
  code: 'EVENTS_OVERLOADED';
  message: string;
}

/** The answer of {@link Dispatcher.admit}. */
export type Admission = { accepted: true; recipients: Recipient[] } | { accepted: false; refusal: Refusal };

/**
 * The answer of {@link Dispatcher.take}: refused, or admitted with `durable`
 * (settles once the event is in the inbox: only then may its sender be told it
 * was taken; it rejects when the store cannot write it) and `routed` (the
 * record once routing is over, as {@link Dispatcher.route} answers; it rejects
 * as `durable` does).
 */
export type Taking = { accepted: true; durable: Promise<void>; routed: Promise<EventRecord> } | { accepted: false; refusal: Refusal };

/** Per-plugin queue occupancy, for health views. */
export type PluginQueueStats = QueueStats & { pluginId: string };

type Failure = { code: DeliveryErrorCode; message: string };

/** One recipient's delivery as the routing loop follows it. */
interface Handed {
  /** The decision, or the failure that stands for it. */
  decided: Promise<DeliveryOutcome>;
  /** Settles when the plugin's slot is free again (completion, decline, failure, deadline). */
  finished: Promise<void>;
}

/**
 * Routes each message event to the plugins that take it (docs/protocol/v2.md,
 * "Routing and delivery"), in priority order through each plugin's bounded
 * queue. It waits only where an answer can change who gets the event: at a
 * declared interceptor, for its decision. Everyone else gets the event at
 * once. A delivery holds its plugin's slot until the work is done (completion,
 * decline, failure) or the handler deadline passes. Transport-neutral: it sees
 * only PluginEndpoints.
 */
export class Dispatcher {
  readonly events: EventLog;
  readonly replies: ReplyReferences;
  readonly providers: ProviderRegistry;
  readonly sink: HostOutboundSink;
  /** The sink endpoints send through: `sink`, or the wrapper of `DispatcherOptions.outbound`. */
  readonly outbound: OutboundSink;
  private readonly queues = new Map<string, PluginQueue>();
  private readonly timeout: number;
  private readonly clock = new IsoTimeCache();
  /** Events whose deliveries are not all final yet, by id. */
  private readonly incomplete = new Map<string, Promise<EventRecord>>();
  private readonly maxWaiting: number;
  /** Deliveries of events taken and being kept in the inbox, not yet routed. */
  private keeping = 0;
  /** Events refused at admission since the host started (the host-wide bound of waiting deliveries). */
  readonly refusals = { hostBacklog: 0 };

  constructor(private readonly o: DispatcherOptions) {
    this.events = o.events ?? new EventLog();
    this.replies = o.replies ?? new ReplyReferences(o.now ? { now: o.now } : {});
    this.providers = o.providers ?? new ProviderRegistry();
    this.timeout = o.requestTimeoutMilliseconds ?? RUNTIME_DEFAULTS.requestTimeoutMilliseconds;
    this.maxWaiting = o.maxWaitingEvents ?? DEFAULT_MAX_WAITING_EVENTS;
    this.sink = new HostOutboundSink({
      events: this.events,
      replies: this.replies,
      providers: this.providers,
      permissionsOf: (id) => this.routingOf(id)?.permissions,
      ...(o.renderers ? { renderers: o.renderers } : {}),
      ...(o.now ? { now: o.now } : {}),
      ...(o.observeOutbound ? { observe: o.observeOutbound } : {}),
    });
    this.outbound = o.outbound ? o.outbound(this.sink) : this.sink;
  }

  routingOf(pluginId: string): PluginRouting | undefined {
    for (const e of this.o.endpoints()) if (e.pluginId === pluginId) return e.routing();
    return undefined;
  }

  /**
   * Queue occupancy per plugin (routing queues; a replica's direct deliveries are under their plugin too), for
   * health views. A delivery routed to a queued endpoint and delivered here holds a slot in both queues: its
   * plugin's active deliveries are those of the direct queue, where the plugin's own limit applies.
   */
  queueStats(): PluginQueueStats[] {
    const byPlugin = new Map<string, PluginQueueStats>();
    // Direct queues first, so a routing queue's pass-through slots are not counted again.
    const queues = [...this.queues].sort(([a], [b]) => Number(b.startsWith(DIRECT)) - Number(a.startsWith(DIRECT)));
    for (const [key, q] of queues) {
      const pluginId = key.startsWith(DIRECT) ? key.slice(DIRECT.length) : key;
      const s = q.stats;
      const seen = byPlugin.get(pluginId);
      if (!seen) byPlugin.set(pluginId, { pluginId, ...s });
      else
        byPlugin.set(pluginId, {
          pluginId,
          active: seen.active,
          waiting: seen.waiting + s.waiting,
          oldestWaitMilliseconds:
            seen.oldestWaitMilliseconds === null
              ? s.oldestWaitMilliseconds
              : Math.max(seen.oldestWaitMilliseconds, s.oldestWaitMilliseconds ?? 0),
          expired: seen.expired + s.expired,
          dropped: seen.dropped + s.dropped,
        });
    }
    return [...byPlugin.values()];
  }

  /** Deliveries waiting for their plugins, host-wide. */
  waitingEvents(): number {
    let n = this.keeping;
    for (const q of this.queues.values()) n += q.waiting;
    return n;
  }

  /**
   * Whether the host can take `event` now, decided before anything is
   * recorded or answered: it is refused when the deliveries waiting
   * host-wide reached `maxWaitingEvents`. One plugin's backlog is bounded by
   * time (its events expire), not by refusing everyone's events. A refused
   * event was not accepted: its sender may send it again (the console gets
   * 503, the QQ Bot webhook asks the platform to push it again).
   */
  admit(event: MessageEvent): Admission {
    const base = event.command === undefined ? event : withoutCommand(event);
    const recipients = selectRecipients(base, this.o.endpoints());
    let refusal: Refusal | undefined;
    if (recipients.length > 0 && this.waitingEvents() >= this.maxWaiting) {
      this.refusals.hostBacklog++;
      refusal = {
        code: 'EVENTS_OVERLOADED',
        message: `The host did not take the event: ${this.maxWaiting} deliveries already wait for plugins (HOST_MAX_WAITING_EVENTS). Send it again in a few seconds.`,
      };
    }
    if (!refusal) return { accepted: true, recipients };
    this.o.onRefused?.(event, refusal);
    return { accepted: false, refusal };
  }

  /**
   * Admits one event ({@link admit}) and routes it; resolves with its record
   * once routing is over: every recipient has decided or failed
   * (`routedAt`). Handlers may still run; see {@link whenCompleted}.
   *
   * @throws HostError EVENTS_OVERLOADED when the event was not admitted (nothing was recorded).
   */
  async dispatch(event: MessageEvent): Promise<EventRecord> {
    const taking = this.take(event);
    if (!taking.accepted) throw new HostError(taking.refusal.code, taking.refusal.message);
    try {
      await taking.durable;
    } catch (e) {
      throw new HostError('STORE_UNAVAILABLE', `The host did not take the event: it could not be recorded (${(e as Error).message}).`);
    }
    return taking.routed;
  }

  /**
   * Admits one event ({@link admit}), keeps it in the inbox, and routes it once
   * it is there. A sender is told the event was taken only after `durable`.
   */
  take(event: MessageEvent): Taking {
    const admission = this.admit(event);
    if (!admission.accepted) return admission;
    // An event nobody takes has nothing to lose: it is only logged.
    if (!this.o.inbox || admission.recipients.length === 0)
      return { accepted: true, durable: Promise.resolve(), routed: this.route(event, admission.recipients) };
    const durable = this.o.inbox.add(event);
    // Its deliveries count as waiting from now: events taken while it is being kept are admitted against them.
    const n = admission.recipients.length;
    this.keeping += n;
    const routed = durable.then(
      () => {
        this.keeping -= n;
        return this.route(event, admission.recipients);
      },
      (e: unknown) => {
        this.keeping -= n;
        throw e;
      },
    );
    // An event that could not be kept is not routed; whoever took it answers the failure through `durable`.
    routed.catch(() => undefined);
    return { accepted: true, durable, routed };
  }

  /**
   * Routes again `events`, which a previous run of this host accepted and did
   * not log final (a crash, a kill; read from the inbox): to the plugins that
   * take them now, outside the admission bound (they were accepted).
   * Deliveries the durable queue finished keep their recorded outcome; the
   * others are delivered, or expire with their reply window.
   */
  resume(events: readonly MessageEvent[]): void {
    for (const event of events) {
      const base = event.command === undefined ? event : withoutCommand(event);
      void this.route(event, selectRecipients(base, this.o.endpoints()));
    }
  }

  /**
   * Routes an event {@link admit} accepted, to the recipients it chose; resolves
   * as {@link dispatch} does.
   */
  async route(event: MessageEvent, recipients: Recipient[]): Promise<EventRecord> {
    // The event as received, without any command a caller left on it (each recipient gets its own).
    const base = event.command === undefined ? event : withoutCommand(event);
    const record = this.newRecord(
      base,
      recipients.map((r) => r.endpoint.pluginId),
    );
    this.events.add(record);
    const decisions: Promise<DeliveryOutcome>[] = [];
    const finishing: Promise<void>[] = [];
    for (const recipient of recipients) {
      const handed = this.deliverTo(record, recipient, base);
      finishing.push(handed.finished);
      if (!recipient.routing.canIntercept) {
        decisions.push(handed.decided);
        continue;
      }
      // Only an interceptor's answer can change who gets the event next.
      const outcome = await handed.decided;
      if (outcome.intercepted) {
        record.interceptedBy = recipient.endpoint.pluginId;
        break;
      }
    }
    await Promise.all(decisions);
    record.routedAt = this.clock.at(Date.now());
    this.events.publish({ type: 'routed', record });
    const completed = Promise.all(finishing).then(() => {
      record.completedAt = this.clock.at(Date.now());
      this.incomplete.delete(record.eventId);
      this.events.publish({ type: 'completed', record });
      return record;
    });
    if (record.completedAt === null) this.incomplete.set(record.eventId, completed);
    return record;
  }

  /**
   * Resolves with the record once every delivery of the event is final
   * (`completedAt`), or at once for an event already complete or unknown.
   */
  whenCompleted(eventId: string): Promise<EventRecord | undefined> {
    return this.incomplete.get(eventId) ?? Promise.resolve(this.events.get(eventId));
  }

  /** The record of an event just received, before any delivery. */
  private newRecord(event: MessageEvent, recipients: string[]): EventRecord {
    return {
      eventId: event.eventId,
      source: event.source,
      receivedAt: this.clock.at(Date.now()),
      routedAt: null,
      completedAt: null,
      event,
      recipients,
      deliveries: [],
      outbound: [],
      interceptedBy: null,
      replySequence: 0,
    };
  }

  /**
   * Delivers one event to one endpoint outside routing: a delivery the replica
   * holding a stdio plugin's lease took from the durable queue (another
   * replica routed the event and keeps its record). The plugin's queue limits,
   * reply permission, ACK timeout and handler deadline apply as in routing;
   * the event is not added to this host's event log. `finished` resolves with
   * the delivery's record once the plugin's slot is free.
   */
  deliverDirect(endpoint: PluginEndpoint, event: MessageEvent): { decided: Promise<DeliveryOutcome>; finished: Promise<DeliveryRecord> } {
    const base = event.command === undefined ? event : withoutCommand(event);
    const record = this.newRecord(base, [endpoint.pluginId]);
    const recipient: Recipient = {
      endpoint,
      routing: endpoint.routing(),
      ...(event.command ? { command: event.command } : {}),
      priority: 0,
    };
    // Its own queue key: the routing side of this host may hold a slot of the plugin's queued endpoint meanwhile.
    const handed = this.deliverTo(record, recipient, base, { queueKey: `${DIRECT}${endpoint.pluginId}`, detached: true });
    return { decided: handed.decided, finished: handed.finished.then(() => record.deliveries[0]!) };
  }

  private deliverTo(record: EventRecord, r: Recipient, base: MessageEvent, how: { queueKey?: string; detached?: boolean } = {}): Handed {
    const publish = how.detached ? () => undefined : () => this.events.publish({ type: 'delivery', record });
    const { endpoint, routing } = r;
    const pluginId = endpoint.pluginId;
    const delivery: DeliveryRecord = {
      pluginId,
      transport: endpoint.transport,
      ...(r.command ? { command: r.command } : {}),
      startedAt: this.clock.at(Date.now()),
      state: 'queued',
      sent: false,
      done: false,
      accepted: false,
      intercepted: false,
      error: null,
      durationMs: null,
      completion: null,
    };
    // Recorded before hand-over: a plugin may reply before it acknowledges.
    record.deliveries.push(delivery);
    const started = performance.now();
    let resolveDecided!: (outcome: DeliveryOutcome) => void;
    const decided = new Promise<DeliveryOutcome>((resolve) => (resolveDecided = resolve));
    const decide = (outcome: DeliveryOutcome): void => {
      if (delivery.done) return;
      // Interception is honoured only from a plugin that declared it (the endpoint records why).
      const intercepted = outcome.intercepted && routing.canIntercept;
      delivery.done = true;
      delivery.accepted = outcome.accepted;
      delivery.intercepted = intercepted;
      delivery.error = outcome.error;
      if (outcome.notice) delivery.notice = outcome.notice;
      delivery.durationMs = performance.now() - started;
      delivery.state = outcome.accepted
        ? 'running'
        : outcome.error?.code === 'delivery.expired'
          ? 'expired'
          : outcome.error
            ? 'failed'
            : 'declined';
      publish();
      resolveDecided(intercepted === outcome.intercepted ? outcome : { ...outcome, intercepted });
    };
    const fail = (f: Failure): DeliveryOutcome => ({
      pluginId,
      accepted: false,
      intercepted: false,
      error: f,
      durationMs: performance.now() - started,
    });
    const event: MessageEvent = r.command ? { ...base, command: r.command } : base;
    const finished = this.queueOf(how.queueKey ?? pluginId, routing, endpoint).submit(
      () => {
        delivery.sent = true;
        delivery.state = 'sent';
        // From here on the plugin may answer the event, for as long as the provider allows.
        this.replies.allow(base, pluginId);
        return this.run(endpoint, routing, event, delivery, decide, fail, publish);
      },
      (why) => decide(fail(failure(why, refusalDetail(why, pluginId, record.receivedAt)))),
      this.expiryOf(base, routing),
    );
    return { decided, finished };
  }

  /**
   * Hands the event to the endpoint and follows it to the end: the ACK
   * timeout stands in for a missing decision, the handler deadline for a
   * missing completion; either cancels the event at the plugin. Resolves when
   * the plugin's slot is free.
   */
  private run(
    endpoint: PluginEndpoint,
    routing: PluginRouting,
    event: MessageEvent,
    delivery: DeliveryRecord,
    decide: (outcome: DeliveryOutcome) => void,
    fail: (f: Failure) => DeliveryOutcome,
    publish: () => void,
  ): Promise<void> {
    let handle: Delivery;
    try {
      handle = endpoint.deliver(event, this.outbound);
    } catch (e) {
      decide(fail(failure('delivery.failed', e instanceof Error ? e.message : String(e))));
      return Promise.resolve();
    }
    const ackMs = routing.requestTimeoutMilliseconds ?? this.timeout;
    const deadlineMs = concurrencyOf(routing.concurrency).handlerDeadlineMilliseconds;
    const sentAt = performance.now();
    return new Promise<void>((release) => {
      let over = false;
      const finish = (completion: CompletionOutcome): void => {
        if (over) return;
        over = true;
        clearTimeout(ackTimer);
        clearTimeout(deadlineTimer);
        // A completion counts only after an accepted decision (a late ACK after a timeout included).
        if (delivery.accepted || completion.error?.code === 'delivery.deadline') {
          delivery.completion = {
            at: this.clock.at(Date.now()),
            error: completion.error,
            durationMs: completion.durationMs ?? performance.now() - sentAt,
          };
          if (delivery.state === 'running') delivery.state = completion.error ? 'failed' : 'completed';
          publish();
        }
        release();
      };
      const ackTimer = setTimeout(() => {
        if (delivery.done) return;
        decide(fail(failure('delivery.timeout', `${endpoint.pluginId} did not acknowledge within ${ackMs} ms`)));
        handle.cancel('ackTimeout');
      }, ackMs);
      const deadlineTimer = setTimeout(() => {
        if (!delivery.done)
          decide(
            fail(failure('delivery.timeout', `${endpoint.pluginId} did not acknowledge within its handler deadline of ${deadlineMs} ms`)),
          );
        handle.cancel('deadline');
        finish({
          error: failure('delivery.deadline', `${endpoint.pluginId} did not complete the event within ${deadlineMs} ms; it was cancelled`),
        });
      }, deadlineMs);
      // A pending delivery must not keep the process alive on its own (a test run, a host shutting down).
      ackTimer.unref();
      deadlineTimer.unref();
      handle.decision.then((outcome) => {
        clearTimeout(ackTimer);
        decide(outcome);
      });
      // The decision is recorded before the completion, whatever order the endpoint settles them in.
      handle.completion.then((completion) => (delivery.done ? finish(completion) : handle.decision.then(() => finish(completion))));
    });
  }

  /**
   * Until when a delivery of `event` may wait for its plugin: the provider's
   * reply window (`messageReference.replyUntil`), cut short by the plugin's
   * `concurrency.maxWaitMilliseconds`; at most LIMITS.maxEventWaitMilliseconds.
   */
  private expiryOf(event: MessageEvent, routing: PluginRouting): number {
    const now = Date.now();
    const replyUntil = event.messageReference.replyUntil === undefined ? NaN : Date.parse(event.messageReference.replyUntil);
    const ownWait = routing.concurrency?.maxWaitMilliseconds ?? LIMITS.maxEventWaitMilliseconds;
    return Math.min(now + Math.min(ownWait, LIMITS.maxEventWaitMilliseconds), Number.isNaN(replyUntil) ? Infinity : replyUntil);
  }

  private queueOf(key: string, routing: PluginRouting, endpoint: PluginEndpoint): PluginQueue {
    let entry = this.queues.get(key);
    if (!entry) {
      const holder = { endpoint };
      // Waiting deliveries start once the plugin takes events; while it starts or restarts they wait for it.
      entry = new PluginQueue(concurrencyOf(routing.concurrency), {
        ready: () => !waitsForStart(holder.endpoint),
      });
      this.endpointOfQueue.set(entry, holder);
      this.queues.set(key, entry);
    } else {
      this.endpointOfQueue.get(entry)!.endpoint = endpoint;
      if (routing.concurrency) entry.setLimits(routing.concurrency);
    }
    return entry;
  }

  /** The endpoint each queue last delivered to (the plugin's current one after a reinstall). */
  private readonly endpointOfQueue = new WeakMap<PluginQueue, { endpoint: PluginEndpoint }>();
}

/** Queue keys of a replica's direct deliveries (see deliverDirect) start with it. */
const DIRECT = '\u0000direct:';

function refusalDetail(why: QueueRefusal, pluginId: string, receivedAt: string): string {
  if (why === 'delivery.dropped') return DELIVERY_ERRORS[why].message;
  if (why === 'delivery.unavailable')
    return `${pluginId} is not running (starting or restarting) and its queue already holds as many events as its concurrency.queueCapacity; this one was not kept for it.`;
  const waited = Math.round((Date.now() - Date.parse(receivedAt)) / 1000);
  return `The event waited ${waited} s for ${pluginId} until it could no longer be answered (its reply window or concurrency.maxWaitMilliseconds) and was never handed to it.`;
}

function failure(code: DeliveryErrorCode, detail?: string): Failure {
  return { code, message: detail ?? DELIVERY_ERRORS[code].message };
}

function withoutCommand(event: MessageEvent): MessageEvent {
  const { command: _ignored, ...base } = event;
  return base;
}
