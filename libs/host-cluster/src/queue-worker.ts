import type { CompletionOutcome, DeliveryOutcome, PluginEndpoint } from '@host/host-core';
import type { DeliveryRecord, Dispatcher } from '@host/host-dispatch';
import { concurrencyOf, type MessageEvent } from '@host/protocol';
import type { ClusterLog, HeldLeases } from './lease-keeper';
import type { HandlingRecord } from './reply-outbox';
import type { SqlDeliveryQueue } from './sql-delivery-queue';

/** An origin waiting in this process for the outcome of a delivery. */
export interface OutcomeListener {
  decide(o: DeliveryOutcome): void;
  complete(c: CompletionOutcome): void;
}

/** A queued (event, plugin) this process delivers: what the worker needs of its row. */
export interface RowToDeliver {
  eventId: string;
  pluginId: string;
  origin: string;
  event: MessageEvent;
  /** How many processes took it, this one included (a first delivery when absent). */
  attempts?: number;
}

export interface QueueWorkerOptions {
  leases: Pick<HeldLeases, 'replica' | 'localEndpoint' | 'epochOf'>;
  queue: Pick<SqlDeliveryQueue, 'claim' | 'decide' | 'finish' | 'recordDelivered'>;
  dispatcher: () => Dispatcher;
  /** Follows the replies and sends of each delivery. */
  outbox: { open(eventId: string, pluginId: string, firstAttempt: boolean): HandlingRecord };
  /** The origin of an event waiting in this process, told directly instead of through the row. */
  waiting: (eventId: string, pluginId: string) => OutcomeListener | undefined;
  log: ClusterLog;
}

/** Rows one claim takes at most. */
const MAX_CLAIM = 100;

/**
 * The worker: claims the waiting rows of the plugins this process holds (as
 * many as each plugin's queue takes), delivers them to the local runtime
 * through the dispatcher, and records decision and completion in the row,
 * which tells the event's origin.
 */
export class QueueWorker {
  private readonly inflight = new Map<string, number>();
  private readonly pumping = new Set<string>();
  private readonly pumpAgain = new Set<string>();
  /** Held plugins whose last claim was cut short by their queue's room: rows may wait, claimed when a delivery ends. */
  private readonly backlog = new Set<string>();
  private stopped = false;

  constructor(private readonly o: QueueWorkerOptions) {}

  /** Claims nothing more from here on. */
  stop(): void {
    this.stopped = true;
  }

  /** Claims and delivers the waiting rows of a held plugin, as many as its queue takes. */
  async pump(pluginId: string): Promise<void> {
    if (this.stopped) return;
    if (this.pumping.has(pluginId)) {
      // A row may have come after this pump's last claim: it claims once more before it ends.
      this.pumpAgain.add(pluginId);
      return;
    }
    this.pumping.add(pluginId);
    try {
      for (;;) {
        this.pumpAgain.delete(pluginId);
        const endpoint = this.o.leases.localEndpoint(pluginId);
        if (!endpoint) return;
        const c = concurrencyOf(endpoint.routing().concurrency);
        const room = c.maxConcurrentEvents + c.queueCapacity - (this.inflight.get(pluginId) ?? 0);
        const limit = Math.min(room, MAX_CLAIM);
        const rows = await this.o.queue.claim(pluginId, limit, true, this.o.leases.epochOf(pluginId));
        // Rows may remain when the claim took as many as there was room for (or none fitted).
        if (limit <= 0 || rows.length === limit) this.backlog.add(pluginId);
        else this.backlog.delete(pluginId);
        for (const row of rows) this.deliver(endpoint, row);
        // Again only when a notice came meanwhile, or when the claim was full and room is left.
        if (!this.pumpAgain.has(pluginId) && !(rows.length > 0 && rows.length === limit && limit < room)) return;
      }
    } catch (e) {
      this.o.log('warn', `cluster: could not claim queued events of ${pluginId}: ${(e as Error).message}`);
    } finally {
      this.pumping.delete(pluginId);
    }
  }

  /**
   * Delivers `row` to the local plugin and records what became of it. `waiter`: the origin waiting in this
   * process (it queued the row itself); `queued`: the write of the row, when it goes on while the plugin
   * already handles the event (the outcome is recorded once the row is there), or `'unqueued'` when no row is
   * written before it (the outcome is written as a final row: {@link SqlDeliveryQueue.recordDelivered}).
   */
  deliver(endpoint: PluginEndpoint, row: RowToDeliver, waiter?: OutcomeListener, queued?: Promise<boolean> | 'unqueued'): void {
    const { eventId, pluginId, origin } = row;
    this.inflight.set(pluginId, (this.inflight.get(pluginId) ?? 0) + 1);
    const record = this.o.outbox.open(eventId, pluginId, (row.attempts ?? 1) === 1);
    // Handed to the plugin (its queue slot taken, its reply reference open): sends from here on are this handling's.
    const tracked: PluginEndpoint = {
      pluginId,
      transport: endpoint.transport,
      routing: () => endpoint.routing(),
      isAvailable: () => endpoint.isAvailable(),
      deliver: (event, sink) => {
        record.handed();
        const d = endpoint.deliver(event, sink);
        void d.completion.finally(() => record.handled());
        return d;
      },
    };
    const handed = this.o.dispatcher().deliverDirect(tracked, row.event);
    // The event's origin waiting in this process is told directly; another replica through the row.
    const here = () => waiter ?? (origin === this.o.leases.replica ? this.o.waiting(eventId, pluginId) : undefined);
    handed.decided.then((decision) => {
      const w = here();
      if (w) w.decide(decision);
      else if (decision.accepted) void this.o.queue.decide(eventId, pluginId, origin, decision).catch(() => undefined);
    });
    void handed.finished
      .then(async (d: DeliveryRecord) => {
        const decision = outcomeOf(d);
        const completion: CompletionOutcome = d.completion
          ? { error: d.completion.error, ...(d.completion.durationMs !== null ? { durationMs: d.completion.durationMs } : {}) }
          : { error: null };
        const replies = await record.replies();
        // The origin waiting here learns it at once; its event stays in the inbox until its final record is written,
        // which comes after the outcome's row below.
        const w = here();
        w?.decide(decision);
        w?.complete(completion);
        if (queued === 'unqueued') {
          await this.o.queue
            .recordDelivered(eventId, pluginId, row.event, decision, completion)
            .catch((e: Error) => this.o.log('warn', `cluster: could not record the outcome of ${eventId} for ${pluginId}: ${e.message}`));
          return;
        }
        const rowWritten = await (queued ?? Promise.resolve(true)).catch((e: Error) => {
          this.o.log('warn', `cluster: could not queue ${eventId} for ${pluginId}: ${e.message}`);
          return false;
        });
        if (rowWritten)
          await this.o.queue
            .finish(eventId, pluginId, origin, decision, completion, false, replies)
            .catch((e: Error) => this.o.log('warn', `cluster: could not record the outcome of ${eventId} for ${pluginId}: ${e.message}`));
      })
      .finally(() => {
        record.close();
        this.inflight.set(pluginId, (this.inflight.get(pluginId) ?? 1) - 1);
        // Room again for rows a claim left waiting (each new row is announced, and the lease round claims too).
        if (this.backlog.has(pluginId)) void this.pump(pluginId);
      });
  }
}

function outcomeOf(d: DeliveryRecord): DeliveryOutcome {
  return {
    pluginId: d.pluginId,
    accepted: d.accepted,
    intercepted: d.intercepted,
    error: d.error,
    ...(d.notice ? { notice: d.notice } : {}),
    durationMs: d.durationMs ?? 0,
  };
}
