import type {
  CompletionOutcome,
  Delivery,
  DeliveryOutcome,
  OutboundRecord,
  PluginEndpoint,
  PluginRouting,
  StdioPluginRecord,
} from '@host/host-core';
import type { Dispatcher } from '@host/host-dispatch';
import { concurrencyOf, RUNTIME_DEFAULTS, type MessageEvent } from '@host/protocol';
import type { HeldLeases } from './lease-keeper';
import type { QueueNotice } from './queue-notices';
import type { OutcomeListener, QueueWorker } from './queue-worker';
import type { QueuedDelivery, SqlDeliveryQueue } from './sql-delivery-queue';

/** Events taken over from gone replicas whose announced outcomes this replica listens for, at most. */
const MAX_ADOPTED = 10_000;

/** An origin in this process waiting for a queued delivery's decision and completion. */
interface Waiter extends OutcomeListener {
  eventId: string;
  pluginId: string;
  since: number;
  decided: boolean;
  /** Whether this process delivered it itself (its replies are in the event's record already). */
  local: boolean;
  /** The final row was read: its replies are being copied (a notice and a re-read may both find it). */
  finishing?: boolean;
}

export interface QueuedEndpointsOptions {
  leases: Pick<HeldLeases, 'replica' | 'shared' | 'takeoverMilliseconds' | 'localEndpoint' | 'isAvailable'>;
  queue: Pick<SqlDeliveryQueue, 'enqueue' | 'finish' | 'get' | 'settled' | 'replies' | 'originsOf' | 'claimer'>;
  worker: Pick<QueueWorker, 'deliver'>;
  dispatcher: () => Dispatcher;
}

/**
 * The origin's side of the queue: one endpoint per enabled stdio plugin,
 * wherever it runs, which the dispatcher routes to. Delivering writes the
 * (event, plugin) row and follows it to its decision and completion, told by
 * the row's notifications (or read again when they are lost); the plugin's
 * replies, sent by the replica running it, are added to the event's record.
 */
export class QueuedEndpoints {
  private readonly endpointsById = new Map<string, QueuedEndpoint>();
  private readonly waiters = new Map<string, Waiter>();
  /**
   * Events routed again after a crash whose local deliveries (one per recipient plugin) must first read the rows the
   * previous run wrote: kept for this process's life, bounded by what its predecessor left in the inbox.
   */
  private readonly resumed = new Set<string>();
  /**
   * Events taken over from a replica that is gone ({@link adopt}): their queue rows name that replica as the
   * origin, so the outcomes announced for them are heard here too. The newest {@link MAX_ADOPTED} only (older
   * ones are read by the lease round's recheck).
   */
  private readonly adopted = new Set<string>();
  /** The gone replicas whose events this one took over: the notifications addressed to them are read here too. */
  private readonly adoptedFrom = new Set<string>();

  constructor(private readonly o: QueuedEndpointsOptions) {}

  /** One endpoint per enabled stdio plugin, wherever it runs. */
  endpoints(): Iterable<PluginEndpoint> {
    return this.endpointsById.values();
  }

  /** Makes the endpoints of the enabled stdio plugins as read, keeping those whose record did not change. */
  sync(records: ReadonlyMap<string, StdioPluginRecord>): void {
    for (const [id, record] of records) {
      const e = this.endpointsById.get(id);
      if (!e || e.record !== record) this.endpointsById.set(id, new QueuedEndpoint(this, record, this.o.leases.takeoverMilliseconds));
    }
    for (const id of [...this.endpointsById.keys()]) if (!records.has(id)) this.endpointsById.delete(id);
  }

  /** Whether a queued event for `pluginId` can be taken now by someone. */
  isAvailable(pluginId: string): boolean {
    return this.o.leases.isAvailable(pluginId);
  }

  /** The origin waiting in this process for `eventId`'s delivery to `pluginId`, if any. */
  waiting(eventId: string, pluginId: string): OutcomeListener | undefined {
    return this.waiters.get(`${eventId}\u0000${pluginId}`);
  }

  /**
   * Whether this replica takes the notifications addressed to `replica`: its own, and those of replicas that
   * are gone and whose events it took over.
   */
  hears(replica: string): boolean {
    return replica === this.o.leases.replica || this.adoptedFrom.has(replica);
  }

  /**
   * Events the previous run of this replica left in its inbox, routed again
   * now: a local delivery of one first reads the queue row that run wrote.
   */
  resuming(eventIds: readonly string[]): void {
    for (const id of eventIds) this.resumed.add(id);
  }

  /** Routes again the events of a gone replica this one took over, hearing the outcomes announced to their origins. */
  async adopt(events: MessageEvent[]): Promise<void> {
    for (const e of events) {
      this.adopted.add(e.eventId);
      if (this.adopted.size > MAX_ADOPTED) this.adopted.delete(this.adopted.values().next().value!);
    }
    const ids = events.map((e) => e.eventId);
    // Rows queued by the gone replica name it as their origin: what is announced for them goes to its name.
    for (const origin of await this.o.queue.originsOf(ids).catch(() => [])) this.adoptedFrom.add(origin);
    this.resuming(ids);
    this.o.dispatcher().resume(events);
  }

  /** A decision or outcome announced for a row: brought to the origin waiting here. */
  onOutcome(n: Extract<QueueNotice, { k: 'decided' | 'done' }>): void {
    if (n.o !== this.o.leases.replica && !this.adopted.has(n.e)) return;
    const w = this.waiters.get(`${n.e}\u0000${n.p}`);
    if (!w || w.local) return;
    // The notification carries what was recorded: answered without reading the row (nor its replies, when they came too).
    if (n.k === 'decided' && n.d) return w.decide(n.d);
    if (n.k === 'done' && n.d && n.r) return this.finishWaiter(w, n.c, n.r, n.d);
    void this.o.queue.get(n.e, n.p).then(
      (row) => row && this.settle(w, row),
      () => undefined,
    );
  }

  /** Queues `event` for `pluginId` and follows the row to its decision and completion. */
  deliver(pluginId: string, event: MessageEvent): Delivery {
    let decide!: (o: DeliveryOutcome) => void;
    let complete!: (c: CompletionOutcome) => void;
    const decision = new Promise<DeliveryOutcome>((r) => (decide = r));
    const completion = new Promise<CompletionOutcome>((r) => (complete = r));
    const started = performance.now();
    const key = `${event.eventId}\u0000${pluginId}`;
    const fail = (message: string): void => {
      this.waiters.delete(key);
      decide({
        pluginId,
        accepted: false,
        intercepted: false,
        error: { code: 'delivery.failed', message },
        durationMs: performance.now() - started,
      });
      complete({ error: null });
    };
    const waiter: Waiter = {
      eventId: event.eventId,
      pluginId,
      since: Date.now(),
      decided: false,
      local: false,
      decide: (o) => {
        if (waiter.decided) return;
        waiter.decided = true;
        decide(o);
      },
      complete: (c) => {
        this.waiters.delete(key);
        complete(c);
      },
    };
    this.waiters.set(key, waiter);
    const local = this.o.leases.localEndpoint(pluginId);
    const replica = this.o.leases.replica;
    void (async () => {
      try {
        if (local && !this.o.leases.shared && !this.resumed.has(event.eventId)) {
          // A host alone running the plugin: delivered here at once, and no row is written until the outcome, which
          // is written as a final row. The event is in the inbox until its final record, so a crash before that
          // write routes it again, and the row then written first says it was not delivered to the end.
          waiter.local = true;
          this.o.worker.deliver(local, { eventId: event.eventId, pluginId, origin: replica, event }, waiter, 'unqueued');
        } else if (local) {
          // Another replica may have taken the same event (a provider's retry), or it is routed again after a crash:
          // the row, written first, says whether it was delivered already. Routed again after a crash, a previous run
          // may have handled it without finishing: its replies recorded and never sent are sent first, once.
          if (await this.o.queue.enqueue(event.eventId, pluginId, event, true)) {
            waiter.local = true;
            const again = this.resumed.has(event.eventId) ? { attempts: 2 } : {};
            this.o.worker.deliver(local, { eventId: event.eventId, pluginId, origin: replica, event, ...again }, waiter);
          } else void this.recheckWaiters([waiter]);
        } else if (!(await this.o.queue.enqueue(event.eventId, pluginId, event))) {
          // Queued before: routed again after a crash (or a provider's retry). An earlier process of this replica may
          // have finished the row already, and a row finished under the origin's own name is announced to nobody (its
          // worker answered the waiter in its own process, which is gone): read now, not at the next lease round.
          void this.recheckWaiters([waiter]);
        }
      } catch (e) {
        fail(`the event could not be queued for ${pluginId}: ${(e as Error).message}`);
      }
    })();
    return {
      decision,
      completion,
      cancel: (reason) => {
        // The origin stopped waiting: a row nobody has claimed yet is made final with that outcome.
        if (waiter.local || !this.waiters.has(key)) return;
        const error = {
          code: reason === 'ackTimeout' ? 'delivery.timeout' : 'delivery.deadline',
          message: `no replica delivered the event to ${pluginId} in time (${reason})`,
        };
        void this.o.queue
          .finish(
            event.eventId,
            pluginId,
            replica,
            { pluginId, accepted: false, intercepted: false, error, durationMs: 0 },
            { error },
            true,
          )
          .catch(() => undefined);
      },
    };
  }

  /** Reads the rows of deliveries this replica waits for longer than `olderThan` ms (notifications may be lost). */
  async recheck(olderThan: number): Promise<void> {
    const now = Date.now();
    const waiting = [...this.waiters.values()].filter((w) => !w.local && now - w.since >= olderThan);
    for (let i = 0; i < waiting.length; i += 500) await this.recheckWaiters(waiting.slice(i, i + 500));
  }

  /** Brings what the queue recorded of `waiters`' rows to them (a row found finished, written by an earlier run). */
  private async recheckWaiters(waiters: readonly Waiter[]): Promise<void> {
    const rows = await this.o.queue.settled(waiters).catch(() => []);
    for (const row of rows) {
      const w = this.waiters.get(`${row.eventId}\u0000${row.pluginId}`);
      if (w) this.settle(w, row);
    }
  }

  /** Brings a recorded row's decision, completion and replies to the waiting origin. */
  private settle(w: Waiter, row: QueuedDelivery): void {
    if (row.decision) w.decide(row.decision);
    if (row.state !== 'done' || !row.decision || w.finishing) return;
    w.finishing = true;
    // Delivered by this process after all (it took the lease meanwhile): the host's sink noted its replies on the record.
    if (row.claimedBy === this.o.queue.claimer) return w.complete(row.completion ?? { error: null });
    void this.o.queue.replies(w.eventId, w.pluginId).then(
      (replies) =>
        this.finishWaiter(
          w,
          row.completion ?? undefined,
          replies.map((r) => r.outbound),
        ),
      () => w.complete(row.completion ?? { error: null }),
    );
  }

  /** Adds the plugin's replies (delivered by another process) to the event's record and completes the waiting origin. */
  private finishWaiter(
    w: Waiter,
    completion: CompletionOutcome | undefined,
    replies: readonly (OutboundRecord | null)[],
    decision?: DeliveryOutcome,
  ): void {
    if (decision) w.decide(decision);
    if (decision && w.finishing) return;
    w.finishing = true;
    const record = this.o.dispatcher().events.get(w.eventId);
    if (record) {
      for (const r of replies) if (r) record.outbound.push(r);
      if (replies.length) this.o.dispatcher().events.publish({ type: 'outbound', record });
    }
    w.complete(completion ?? { error: null });
  }
}

/**
 * A stdio plugin as the dispatcher of every replica sees it in a cluster:
 * routed by its manifest, delivered through the durable queue. Its waits are
 * longer than the plugin's own by the takeover bound, so an event queued
 * while the plugin moves is not given up at the origin (the holder applies the
 * plugin's own ACK timeout and deadline).
 */
export class QueuedEndpoint implements PluginEndpoint {
  readonly transport = 'stdio-jsonrpc' as const;
  readonly pluginId: string;
  private readonly routingValue: PluginRouting;

  constructor(
    private readonly queue: Pick<QueuedEndpoints, 'isAvailable' | 'deliver'>,
    readonly record: StdioPluginRecord,
    takeoverMilliseconds: number,
  ) {
    this.pluginId = record.pluginId;
    const m = record.manifest;
    const c = concurrencyOf(m.concurrency);
    this.routingValue = {
      pluginId: this.pluginId,
      // The registry hands records back as they were stored, not parsed again: read as the local runtime reads them.
      eventSubscriptions: m.eventSubscriptions ?? [],
      commands: m.commands ?? [],
      permissions: m.permissions ?? [],
      // The plugin's own limits apply where it runs; here, events wait for its queue there.
      concurrency: {
        maxConcurrentEvents: c.maxConcurrentEvents + c.queueCapacity,
        queueCapacity: c.queueCapacity,
        overflowPolicy: c.overflowPolicy,
        handlerDeadlineMilliseconds: c.handlerDeadlineMilliseconds + takeoverMilliseconds,
      },
      requestTimeoutMilliseconds: RUNTIME_DEFAULTS.requestTimeoutMilliseconds + takeoverMilliseconds,
      canIntercept: m.permissions?.includes('messages.intercept') ?? false,
    };
  }

  routing(): PluginRouting {
    return this.routingValue;
  }

  isAvailable(): boolean {
    return this.queue.isAvailable(this.pluginId);
  }

  deliver(event: MessageEvent): Delivery {
    return this.queue.deliver(this.pluginId, event);
  }
}
