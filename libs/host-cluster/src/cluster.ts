import { createHash, randomUUID } from 'node:crypto';
import {
  HostError,
  type CompletionOutcome,
  type Delivery,
  type DeliveryOutcome,
  type OutboundRequest,
  type OutboundSink,
  type PluginEndpoint,
  type PluginRouting,
  type PluginRuntime,
  type RegistryStore,
  type RuntimeStatus,
  type SettingsDelivery,
  type StdioPluginRecord,
  type StopReason,
} from '@host/host-core';
import type { DeliveryRecord, Dispatcher, OutboundRecord } from '@host/host-dispatch';
import {
  LEASE_TIMINGS,
  type PluginLease,
  type QueuedDelivery,
  type ControlAction,
  type QueueNotice,
  type SqlDeliveryQueue,
  type SqlEventInbox,
  type SqlLeases,
} from '@host/host-store';
import type { StdioPluginRuntime } from '@host/host-runtime';
import { RUNTIME_DEFAULTS, type MessageEvent, type SendResult } from '@host/protocol';

export interface ClusterOptions {
  replica: string;
  leases: SqlLeases;
  queue: SqlDeliveryQueue;
  /**
   * This replica's inbox: when replicas share the database, the lease round takes over the inbox of a replica
   * that is gone ({@link SqlEventInbox.adoptOrphans}) and routes its events again.
   */
  inbox?: SqlEventInbox;
  store: RegistryStore;
  /** The local runtime; given with {@link Cluster.attach} when it is made after the cluster. */
  runtime?: StdioPluginRuntime;
  /** Set once the dispatcher exists (it needs the cluster's endpoints and sink first). */
  dispatcher: () => Dispatcher;
  /** Plugins whose package does not validate here: never started. */
  invalid: () => readonly string[];
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  timings?: { renewMilliseconds?: number; ttlMilliseconds?: number };
  /**
   * Whether other replicas share the database (a PostgreSQL server). Alone (the embedded database), an event's id
   * reaches this process once, so a local delivery starts while its row is written instead of after.
   */
  shared: boolean;
  /** Final queue rows kept (older ones are pruned with their replies). */
  keepFinished?: number;
}

/** Replies of one (event, plugin) counted at most, to number them; oldest dropped beyond it. */
const MAX_REPLY_COUNTERS = 10_000;
/** How long an origin waits for a queued delivery's row before it reads it again (lost notifications). */
const RECHECK_MILLISECONDS = 2_000;
/** Events taken over from gone replicas whose announced outcomes this replica listens for, at most. */
const MAX_ADOPTED = 10_000;
/** Replies of one handling carried to the origin with the outcome at most (more: the origin reads them). */
const MAX_CARRIED_REPLIES = 32;

interface Waiter {
  eventId: string;
  pluginId: string;
  since: number;
  decided: boolean;
  decide: (o: DeliveryOutcome) => void;
  complete: (c: CompletionOutcome) => void;
  /** Whether this process delivered it itself (its replies are in the event's record already). */
  local: boolean;
  /** The final row was read: its replies are being copied (a notice and a re-read may both find it). */
  finishing?: boolean;
}

/**
 * Several hosts on one PostgreSQL server (docs/operator/cluster.md): each
 * enabled stdio plugin runs on the one replica that holds its lease, and
 * every event for it goes through the durable queue, whichever replica took
 * it. This class is the replica's part of that:
 * - the lease round (every 3 s): takes free or expired leases of enabled
 *   plugins and starts them, renews its own, stops plugins whose lease it lost
 *   or which were disabled or removed, and releases those leases;
 * - the queued endpoints the dispatcher routes to: one per enabled stdio
 *   plugin, wherever it runs; delivering writes the (event, plugin) row and
 *   waits for its decision and completion;
 * - the worker: claims rows of the plugins it holds and delivers them to the
 *   local process, recording decision and completion;
 * - the reply recorder: each reply is recorded before it is sent, so a
 *   delivery repeated after a takeover does not send it again;
 * - the runtime the admin API acts on: start takes the lease, stop, restart
 *   and settings go to the replica that holds it; the status shows it.
 */
export class Cluster {
  private readonly renewMs: number;
  private readonly ttlMs: number;
  /** Plugins whose lease this replica holds (as of its last round). */
  private readonly held = new Set<string>();
  /** Every lease as last read, by plugin. */
  private leases = new Map<string, PluginLease>();
  /** Enabled stdio plugins as last read, by plugin. */
  private records = new Map<string, StdioPluginRecord>();
  private readonly endpointsById = new Map<string, QueuedEndpoint>();
  private readonly waiters = new Map<string, Waiter>();
  private readonly inflight = new Map<string, number>();
  private readonly pumping = new Set<string>();
  private readonly pumpAgain = new Set<string>();
  /** Held plugins whose last claim was cut short by their queue's room: rows may wait, claimed when a delivery ends. */
  private readonly backlog = new Set<string>();
  private readonly replyCounts = new Map<string, number>();
  private readonly observed = new WeakMap<OutboundRequest, OutboundRecord>();
  /**
   * Outbound records of the replies this process sent for each (event, plugin)
   * it delivers now, by reply number: carried to the origin with the outcome.
   * `complete`: no reply of the handling was recorded by another process.
   */
  private readonly sentReplies = new Map<string, { records: (OutboundRecord | null)[]; complete: boolean; noting: Promise<void>[] }>();
  /** Events each local plugin handles now (handed to it, not completed), with the sends made meanwhile. */
  private readonly handling = new Map<string, Map<string, { sends: number }>>();
  private inner: OutboundSink | undefined;
  /** Control requests this replica waits for an answer to, by id. */
  private readonly answers = new Map<string, (answer: unknown) => void>();
  private timer: NodeJS.Timeout | undefined;
  private stopWatching: (() => Promise<void>) | undefined;
  private round: Promise<void> = Promise.resolve();
  private roundAgain = false;
  private firstRound = true;
  private stopped = false;
  private rounds = 0;
  private takeOver = false;
  /** Plugins an operator started here just now, by when: kept while the record says `enabled` (written right after). */
  private readonly startedHere = new Map<string, number>();
  /**
   * Events routed again after a crash whose local deliveries (one per recipient plugin) must first read the rows the
   * previous run wrote: kept for this process's life, bounded by what its predecessor left in the inbox.
   */
  private readonly resumed = new Set<string>();
  /**
   * Events taken over from a replica that is gone ({@link adoptOrphans}): their queue rows name that replica as
   * the origin, so the outcomes announced for them are heard here too. The newest {@link MAX_ADOPTED} only (older
   * ones are read by the lease round's recheck).
   */
  private readonly adopted = new Set<string>();
  /** Plugins this replica took the lease of and is starting (before the runtime says `starting`): events wait for them. */
  private readonly launching = new Set<string>();
  /** Starts of the round that took plugins over at the host's start, which {@link start} waits for. */
  private readonly booting: Promise<unknown>[] = [];

  private rtValue: StdioPluginRuntime | undefined;

  constructor(private readonly o: ClusterOptions) {
    this.rtValue = o.runtime;
    this.renewMs = o.timings?.renewMilliseconds ?? LEASE_TIMINGS.renewMilliseconds;
    this.ttlMs = o.timings?.ttlMilliseconds ?? LEASE_TIMINGS.ttlMilliseconds;
  }

  /** Gives the local runtime (made after the dispatcher, which needs the cluster first). */
  attach(runtime: StdioPluginRuntime): void {
    this.rtValue = runtime;
  }

  private get rt(): StdioPluginRuntime {
    if (!this.rtValue) throw new Error('The cluster has no runtime attached.');
    return this.rtValue;
  }

  get replica(): string {
    return this.o.replica;
  }

  /**
   * Reads the plugins and leases, listens to the queue and starts the lease
   * rounds: from here on, events are routed and the leases this replica takes
   * (an operator's start) are renewed.
   */
  async open(): Promise<void> {
    this.stopWatching = await this.o.queue.watch(
      (n) => this.onNotice(n),
      () => void this.recheck(0),
    );
    await this.runRound();
    this.timer = setInterval(() => void this.runRound(), this.renewMs);
    this.timer.unref();
  }

  /** Lets the rounds take free and expired leases of enabled plugins (the host's start of its plugins). */
  async start(): Promise<void> {
    this.takeOver = true;
    await this.runRound();
    // The plugins the first round took are started (or failed) when the host's start of its plugins ends, as on a host alone.
    await Promise.all(this.booting.splice(0));
  }

  /** A change of a plugin's record (any replica): a lease round soon, so enable, disable and removal act at once. */
  pluginChanged(): void {
    void this.runRound();
  }

  /** Stops the rounds, the plugins it runs, and gives their leases up for another replica to take at once. */
  async close(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.round.catch(() => undefined);
    await this.stopWatching?.();
    await this.rt.stopAll('hostShutdown');
    // Given up at once: another replica takes the plugins over at its next round.
    for (const id of this.held) await this.o.leases.release(id).catch(() => undefined);
    this.held.clear();
  }

  // ---- the dispatcher's side ----

  /** One endpoint per enabled stdio plugin, wherever it runs. */
  endpoints(): Iterable<PluginEndpoint> {
    return this.endpointsById.values();
  }

  /** Wraps the host's sink: replies, and sends made while handling an event, are numbered and recorded before they are sent. */
  outbound(inner: OutboundSink): OutboundSink {
    this.inner = inner;
    return { send: (request) => (request.kind === 'reply' ? this.sendRecorded(inner, request) : this.sendKeyed(inner, request)) };
  }

  /** Keeps what the host's sink recorded of a request, for the reply's row. */
  observe(request: OutboundRequest, outbound: OutboundRecord): void {
    this.observed.set(request, outbound);
  }

  private async sendRecorded(inner: OutboundSink, request: OutboundRequest): Promise<SendResult> {
    if (request.eventId === undefined) return inner.send(request);
    const { eventId, pluginId } = request;
    // A reply the host's sink refuses anyway (not this plugin's event, or its window closed) is neither numbered nor recorded.
    if (this.o.dispatcher().replies.find(pluginId, eventId).status !== 'open') return inner.send(request);
    const key = `${eventId}\u0000${pluginId}`;
    const n = (this.replyCounts.get(key) ?? 0) + 1;
    this.replyCounts.delete(key);
    this.replyCounts.set(key, n);
    if (this.replyCounts.size > MAX_REPLY_COUNTERS) this.replyCounts.delete(this.replyCounts.keys().next().value!);
    // Recorded before it is sent: after a takeover, a reply recorded already is not sent again.
    const { fresh, reply } = await this.o.queue.recordReply(eventId, pluginId, n, { message: request.message }, this.epochOf(pluginId));
    if (!fresh) {
      const sent = this.sentReplies.get(key);
      if (sent) sent.complete = false;
      // Recorded by a replica that died before marking it sent: sent now, by the one process that claims it.
      if (!reply.sent) {
        const [claimed] = await this.o.queue.claimUnsent('reply', eventId, pluginId, n);
        if (claimed) return this.sendReplyNow(inner, request, n, reply.sequence);
      }
      // Sent before (or being sent by the process that claimed it): answered as it was recorded, not sent again.
      const found = this.o.dispatcher().replies.find(pluginId, eventId);
      const before = reply.outbound as OutboundRecord | null;
      if (before?.error) throw new HostError(before.error.code as never, before.error.message);
      const target = before?.target ?? (found.status !== 'unknown' ? { ...found.reference.target } : { type: 'group' as const, id: '' });
      // Handled again after a crash or takeover: the event's record here shows the reply the user got before.
      if (before) this.showOnRecord(eventId, before);
      return { accepted: true, ...(before?.messageId ? { messageId: before.messageId } : {}), target };
    }
    return this.sendReplyNow(inner, request, n, reply.sequence);
  }

  /** Adds a reply sent by an earlier handling to the event's record in this host's log, once. */
  private showOnRecord(eventId: string, outbound: OutboundRecord): void {
    const record = this.o.dispatcher().events.get(eventId);
    if (!record) return;
    const same = (o: OutboundRecord) => o.pluginId === outbound.pluginId && o.at === outbound.at && o.messageId === outbound.messageId;
    if (record.outbound.some(same)) return;
    record.outbound.push(outbound);
    this.o.dispatcher().events.publish({ type: 'outbound', record });
  }

  /** Sends a recorded reply with the sequence number the database gave it (whichever replica sends) and marks it sent. */
  private async sendReplyNow(inner: OutboundSink, request: OutboundRequest, n: number, sequence: number): Promise<SendResult> {
    const { eventId, pluginId } = request as OutboundRequest & { eventId: string };
    const found = this.o.dispatcher().replies.find(pluginId, eventId);
    if (found.status !== 'unknown') found.reference.sequence = sequence - 1;
    try {
      return await inner.send(request);
    } finally {
      const outbound = this.observed.get(request) ?? null;
      const sent = this.sentReplies.get(`${eventId}\u0000${pluginId}`);
      if (sent && n <= MAX_CARRIED_REPLIES) sent.records[n - 1] = outbound;
      else if (sent) sent.complete = false;
      const noting = this.o.queue.noteReply(eventId, pluginId, n, outbound).catch(() => undefined);
      // While the plugin handles the event here, the mark is written alongside (the outcome waits for it); else before answering.
      if (sent && sent.noting.length < MAX_CARRIED_REPLIES) sent.noting.push(noting);
      else await noting;
    }
  }

  /**
   * messages.send made while the plugin handles an event on this replica: the
   * n-th send of that handling, recorded before it is sent; the plugin
   * handling the event again after a takeover gets the recorded answer
   * instead of a second message. The event is the one the send names
   * (`eventId`, which the SDKs fill in inside a handler), looked up among the
   * events this plugin handles here only; a send naming none is keyed by the
   * one event in flight, when there is exactly one. Sends naming an event not
   * in flight for this plugin, outside any handling (timers), or naming none
   * while several events are handled at once go out unrecorded.
   */
  private async sendKeyed(inner: OutboundSink, request: OutboundRequest): Promise<SendResult> {
    const keyed = this.handlingOf(request);
    if (!keyed) return inner.send(request);
    const [eventId, h] = keyed;
    const n = ++h.sends;
    const digest = createHash('sha256')
      .update(JSON.stringify({ target: request.target ?? null, message: request.message }))
      .digest('hex');
    const { fresh, send } = await this.o.queue.recordSend(
      eventId,
      request.pluginId,
      n,
      digest,
      {
        target: request.target ?? null,
        message: request.message,
        // Kept so a left-over send goes out as it was asked (its event's bot by default).
        ...(request.eventId !== undefined ? { eventId } : {}),
      },
      this.epochOf(request.pluginId),
    );
    if (!fresh) {
      if (send.digest !== digest) {
        // Not the message sent the first time (the handler took another path): sent, unrecorded.
        this.o.log('warn', `cluster: ${request.pluginId} sent another message as send ${n} of ${eventId} than before; sent unrecorded`);
        return inner.send(request);
      }
      if (!send.sent) {
        const [claimed] = await this.o.queue.claimUnsent('send', eventId, request.pluginId, n);
        if (claimed) return this.sendNow(inner, request, eventId, n);
      }
      const result = send.result as (SendResult & { error?: undefined }) | { error: { code: string; message: string } } | null;
      if (result?.error) throw new HostError(result.error.code as never, result.error.message);
      return (result as SendResult | null) ?? { accepted: true, target: request.target! };
    }
    return this.sendNow(inner, request, eventId, n);
  }

  /** The handling a send belongs to: the one its eventId names (this plugin's, in flight here), else the only one in flight. */
  private handlingOf(request: OutboundRequest): [string, { sends: number }] | undefined {
    const handling = this.handling.get(request.pluginId);
    if (request.eventId !== undefined) {
      const h = handling?.get(request.eventId);
      return h ? [request.eventId, h] : undefined;
    }
    return handling?.size === 1 ? [...handling][0] : undefined;
  }

  /** Sends a recorded send and marks it sent with the provider's answer (or its refusal). */
  private async sendNow(inner: OutboundSink, request: OutboundRequest, eventId: string, n: number): Promise<SendResult> {
    let result: unknown;
    try {
      const sent = await inner.send(request);
      result = sent;
      return sent;
    } catch (e) {
      const err = e as { code?: unknown; message?: unknown };
      result = { error: { code: typeof err.code === 'string' ? err.code : 'message.provider.failed', message: String(err.message ?? e) } };
      throw e;
    } finally {
      await this.o.queue.noteSend(eventId, request.pluginId, n, result ?? null, this.observed.get(request) ?? null).catch(() => undefined);
    }
  }

  /**
   * A delivery again after a takeover: replies and sends of the event that the
   * replica before recorded and never marked sent are sent now, once (claimed
   * row by row), before the plugin's own repeat could find them.
   */
  private async sendLeftOver(eventId: string, pluginId: string): Promise<void> {
    const inner = this.inner;
    if (!inner) return;
    for (const kind of ['reply', 'send'] as const) {
      for (const row of await this.o.queue.claimUnsent(kind, eventId, pluginId)) {
        const recorded = row.request as {
          message: OutboundRequest['message'];
          target?: OutboundRequest['target'] | null;
          eventId?: string;
        };
        const request: OutboundRequest =
          kind === 'reply'
            ? { pluginId, kind, eventId, message: recorded.message }
            : {
                pluginId,
                kind,
                ...(recorded.eventId !== undefined ? { eventId: recorded.eventId } : {}),
                message: recorded.message,
                ...(recorded.target ? { target: recorded.target } : {}),
              };
        this.o.log(
          'info',
          `cluster: sending ${kind} ${row.n} of ${pluginId} to ${eventId}, recorded by a replica that stopped before sending it`,
        );
        await (
          kind === 'reply' ? this.sendReplyNow(inner, request, row.n, row.sequence!) : this.sendNow(inner, request, eventId, row.n)
        ).catch((e: Error) =>
          this.o.log('warn', `cluster: the left-over ${kind} ${row.n} of ${pluginId} to ${eventId} failed: ${e.message}`),
        );
      }
    }
  }

  /** Queues `event` for `pluginId` and follows the row to its decision and completion. */
  deliverQueued(pluginId: string, event: MessageEvent): Delivery {
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
    const local = this.localEndpoint(pluginId);
    void (async () => {
      try {
        if (local && !this.o.shared && !this.resumed.has(event.eventId)) {
          // This replica runs the plugin: delivered here at once, while the row is written claimed by it (the event
          // is in the inbox already, so a crash before the row is written routes it again). Its outcome waits for the row.
          waiter.local = true;
          const queued = this.o.queue.enqueue(event.eventId, pluginId, event, true);
          this.deliverRow(local, { eventId: event.eventId, pluginId, origin: this.o.replica, event }, waiter, queued);
        } else if (local) {
          // Another replica may have taken the same event (a provider's retry), or it is routed again after a crash:
          // the row, written first, says whether it was delivered already.
          if (await this.o.queue.enqueue(event.eventId, pluginId, event, true)) {
            waiter.local = true;
            this.deliverRow(local, { eventId: event.eventId, pluginId, origin: this.o.replica, event }, waiter);
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
            this.o.replica,
            { pluginId, accepted: false, intercepted: false, error, durationMs: 0 },
            { error },
            true,
          )
          .catch(() => undefined);
      },
    };
  }

  // ---- the admin API's side ----

  /** The runtime the admin API and the installer act on. */
  runtimeFacade(): PluginRuntime {
    const rt = this.rt;
    return {
      start: async (id) => {
        if (!this.held.has(id)) {
          // Taken unless another replica runs it: then it stays there.
          const lease = this.leases.get(id) ?? (await this.readLease(id));
          const elsewhere = lease?.live && lease.holder !== '' && lease.holder !== this.o.replica;
          const got = await this.o.leases.acquire([id], !elsewhere);
          if (!got.includes(id)) return this.status(id) ?? { state: 'starting', crashCount: 0 };
          this.held.add(id);
          this.o.log('info', `cluster: took the lease of ${id}; starting it on ${this.o.replica}`);
        }
        this.startedHere.set(id, Date.now());
        const status = this.withReplica(await rt.start(id));
        await this.refreshEndpoints().catch(() => undefined);
        return status;
      },
      stop: async (id, reason?: StopReason) => {
        if (!this.held.has(id)) {
          // The replica running it stops it and answers with the plugin's state (NOTIFY both ways, no polling).
          const lease = await this.readLease(id);
          if (!lease?.live || lease.holder === '' || (reason !== undefined && reason !== 'operator'))
            return this.status(id) ?? rt.stop(id, reason);
          const answered = await this.ask(id, lease.holder, 'stop', RUNTIME_DEFAULTS.stopGraceMilliseconds + 3_000);
          await this.readLease(id).catch(() => undefined);
          return (answered as RuntimeStatus | undefined) ?? this.status(id) ?? { state: 'stopped', crashCount: 0 };
        }
        // An operator's stop gives the lease up; an update's stop keeps it (the plugin starts again here).
        if (reason === undefined || reason === 'operator') return this.stopHere(id);
        return this.withReplica(await rt.stop(id, reason));
      },
      restart: async (id) => {
        if (this.held.has(id)) return this.withReplica(await rt.restart(id));
        const lease = this.leases.get(id);
        if (!lease?.live || lease.holder === '') return this.runtimeFacade().start(id);
        // Answered once the replica running it has restarted it (its stop grace and the new start).
        const answered = (await this.ask(
          id,
          lease.holder,
          'restart',
          RUNTIME_DEFAULTS.stopGraceMilliseconds + RUNTIME_DEFAULTS.initializeTimeoutMilliseconds + 3_000,
        )) as RuntimeStatus | undefined;
        // The holder's state as it answered is the newest (its publication with the lease may still be on its way).
        if (answered) this.leases.set(id, { ...lease, status: answered as Record<string, unknown> });
        return answered ?? this.status(id) ?? { state: 'starting', crashCount: 0 };
      },
      status: (id) => this.status(id),
      isRunning: (id) => this.held.has(id) && rt.isRunning(id),
      applySettings: async (id): Promise<SettingsDelivery> => {
        if (this.held.has(id)) return rt.applySettings(id);
        const lease = this.leases.get(id);
        if (!lease?.live || lease.holder === '') return rt.applySettings(id);
        // The replica running it gives the plugin its settings and answers what became of them.
        const delivery = (await this.ask(id, lease.holder, 'settings', RUNTIME_DEFAULTS.requestTimeoutMilliseconds + 2_000)) as
          SettingsDelivery | undefined;
        return (
          delivery ?? {
            status: 'restartRequired',
            message: `${id} runs on replica ${lease.holder}, which did not say whether it took the new settings; restart ${id} (POST /api/plugins/${id}/restart) to apply them.`,
          }
        );
      },
      stopAll: (reason) => rt.stopAll(reason),
    };
  }

  /**
   * Asks the replica holding `pluginId`'s lease to act on it (NOTIFY) and waits
   * for its answer (NOTIFY back, sent once it acted); undefined when none came
   * within `timeoutMs` (the holder died, or its answer was lost).
   */
  private async ask(pluginId: string, holder: string, action: ControlAction, timeoutMs: number): Promise<unknown> {
    const answerId = randomUUID();
    const answered = new Promise<{ answer: unknown } | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), timeoutMs);
      timer.unref();
      this.answers.set(answerId, (answer) => {
        clearTimeout(timer);
        resolve({ answer });
      });
    });
    try {
      await this.o.queue.control(pluginId, holder, action, { id: answerId, from: this.o.replica });
      const got = await answered;
      this.o.log(
        got ? 'info' : 'warn',
        got
          ? `cluster: replica ${holder} answered the ${action} of ${pluginId}`
          : `cluster: replica ${holder} did not answer the ${action} of ${pluginId} in ${timeoutMs} ms`,
      );
      return got?.answer ?? undefined;
    } finally {
      this.answers.delete(answerId);
    }
  }

  /** An operator's stop of a plugin this replica runs: stopped, and the lease given up with a hold (see SqlLeases.release). */
  private async stopHere(id: string): Promise<RuntimeStatus> {
    const status = await this.rt.stop(id, 'operator');
    this.held.delete(id);
    this.startedHere.delete(id);
    await this.o.leases.release(id, status as Record<string, unknown>, this.ttlMs);
    await this.readLease(id);
    return status;
  }

  /** Reads one plugin's lease into the cache. */
  private async readLease(pluginId: string): Promise<PluginLease | undefined> {
    const lease = (await this.o.leases.list()).find((l) => l.pluginId === pluginId);
    if (lease) this.leases.set(pluginId, lease);
    else this.leases.delete(pluginId);
    return lease;
  }

  /**
   * The plugin's runtime status, the same on every replica: this replica's
   * when it holds the lease, else the holder's as it published it with the lease.
   */
  status(pluginId: string): RuntimeStatus | undefined {
    if (this.held.has(pluginId)) {
      const local = this.rt.status(pluginId);
      return local && this.withReplica(local);
    }
    const lease = this.leases.get(pluginId);
    const published = lease?.status as RuntimeStatus | null | undefined;
    if (!lease) return this.rt.status(pluginId);
    if (lease.holder === '') return published ?? this.rt.status(pluginId);
    if (lease.live) return { ...(published ?? { state: 'starting', crashCount: 0 }), replica: lease.holder } as RuntimeStatus;
    // Its replica stopped renewing the lease (it died or lost the database): another one takes the plugin over.
    return {
      ...(published ?? { crashCount: 0 }),
      state: 'restartPending',
      stateReason: `replica ${lease.holder} stopped renewing the lease of ${pluginId}; another replica takes it over`,
    } as RuntimeStatus;
  }

  /** The runtime reports a status change of a plugin: published with its lease for the other replicas. */
  statusChanged(pluginId: string, status: RuntimeStatus): void {
    if (this.stopped || !this.held.has(pluginId)) return;
    void this.o.leases.publishStatus(pluginId, status as Record<string, unknown>).catch(() => undefined);
    if (status.state === 'running') void this.pump(pluginId);
  }

  /**
   * The lease epoch fenced statements check for `pluginId` (claims, recorded replies and sends): with replicas
   * sharing the server only; a host alone has nobody to lose its lease to.
   */
  private epochOf(pluginId: string): number | undefined {
    return this.o.shared ? this.o.leases.epochs.get(pluginId) : undefined;
  }

  private withReplica(status: RuntimeStatus): RuntimeStatus {
    // A host alone on its embedded database names no replica: there is no other.
    if (!this.o.shared) return status;
    return { ...status, replica: this.o.replica } as RuntimeStatus;
  }

  // ---- the lease round ----

  /** One round at a time; a round asked for during one runs right after it. */
  private runRound(): Promise<void> {
    if (this.stopped) return this.round;
    if (this.roundAgain) return this.round;
    this.roundAgain = true;
    this.round = this.round.then(async () => {
      this.roundAgain = false;
      if (this.stopped) return;
      try {
        await this.leaseRound();
      } catch (e) {
        this.o.log('warn', `cluster: the lease round failed: ${(e as Error).message}`);
      }
    });
    return this.round;
  }

  /** Reads the enabled stdio plugins (and those an operator started here just now) and makes their endpoints. */
  private async refreshEndpoints(): Promise<Map<string, StdioPluginRecord>> {
    const invalid = new Set(this.o.invalid());
    const records = new Map<string, StdioPluginRecord>();
    const now = Date.now();
    // Kept while the start runs (a slow machine may take longer than two rounds), then two rounds more.
    for (const [id, at] of this.startedHere)
      if (this.rtValue?.status(id)?.state === 'starting') this.startedHere.set(id, now);
      else if (now - at > 2 * this.renewMs) this.startedHere.delete(id);
    for (const r of await this.o.store.list())
      if (r.transport === 'stdio-jsonrpc' && (r.enabled || this.startedHere.has(r.pluginId)) && !invalid.has(r.pluginId))
        records.set(r.pluginId, r);
    this.records = records;
    this.syncEndpoints();
    return records;
  }

  private async leaseRound(): Promise<void> {
    const rt = this.rt;
    // Only leases held when the round began are judged by what it reads: one an operator's start takes meanwhile
    // (after this round read the plugins or renewed) is judged by the next round.
    const heldBefore = new Set(this.held);
    const records = await this.refreshEndpoints();

    if (this.o.shared) await this.adoptOrphans();
    // Renew what this replica holds; a plugin whose lease was lost (this replica was cut off too long) stops here.
    const renewed = new Set(await this.o.leases.renew());
    for (const id of [...this.held]) {
      if (renewed.has(id) || !heldBefore.has(id)) continue;
      this.held.delete(id);
      this.o.log('warn', `cluster: lost the lease of ${id}; stopping it here (another replica runs it)`);
      await rt.stop(id, 'hostShutdown').catch(() => undefined);
    }
    // Leases under this replica's name that this process never took: a process of the same name that is gone
    // (killed and restarted at once) held them, so nothing runs those plugins. Taken over as new below, or given
    // up until this process takes plugins over.
    const inherited = [...renewed].filter((id) => !this.held.has(id));
    for (const id of inherited) {
      renewed.delete(id);
      if (this.takeOver && records.has(id)) continue;
      this.o.log('info', `cluster: gave up the lease of ${id} that an earlier process of ${this.o.replica} left; it is gone`);
      await this.o.leases.release(id).catch(() => undefined);
    }
    for (const id of renewed) this.held.add(id);
    // Disabled or removed plugins: stopped and their leases given up.
    for (const id of [...this.held]) {
      if (records.has(id) || !heldBefore.has(id)) continue;
      await this.stopHere(id).catch((e: Error) => this.o.log('warn', `could not stop ${id}: ${e.message}`));
    }
    // Take what nobody holds (or whose holder stopped renewing) and start it.
    const free = this.takeOver ? [...records.keys()].filter((id) => !this.held.has(id)) : [];
    const taken = await this.o.leases.acquire(free);
    const boot = this.firstRound && this.takeOver;
    if (this.takeOver) this.firstRound = false;
    for (const id of taken) {
      this.held.add(id);
      this.o.log(
        'info',
        inherited.includes(id)
          ? `cluster: took over the lease of ${id} from an earlier process of ${this.o.replica} that is gone; starting it here`
          : `cluster: took the lease of ${id}; starting it on ${this.o.replica}`,
      );
      this.launching.add(id);
      const started = (boot ? rt.startOnBoot(id) : rt.start(id)).then(
        (status) => {
          this.launching.delete(id);
          this.statusChanged(id, status);
          if (status.state === 'failed' && status.stateReason) this.o.log('warn', `${id} ${status.stateReason}`);
        },
        (e: Error) => {
          this.launching.delete(id);
          this.o.log('warn', `could not start ${id}: ${e.message}`);
        },
      );
      if (boot) this.booting.push(started);
    }
    this.leases = new Map((await this.o.leases.list()).map((l) => [l.pluginId, l]));
    // Rows of held plugins waiting (a missed notification, a takeover), and origins' rows whose notice was lost.
    for (const id of this.held) void this.pump(id);
    await this.recheck(RECHECK_MILLISECONDS);
    if (++this.rounds % 20 === 0) await this.o.queue.prune(this.o.keepFinished ?? 10_000);
  }

  /**
   * Says this replica is alive, and routes again the events a replica that is gone (it did not beat for a
   * lease's time, and no process of its name came back) accepted and never logged final: nobody else would.
   * Their queue rows say what was delivered already; the outcomes of those reach the event's record here.
   */
  private async adoptOrphans(): Promise<void> {
    await this.o.leases.heartbeat();
    if (!this.o.inbox) return;
    const events = await this.o.inbox.adoptOrphans(this.ttlMs);
    if (events.length === 0) return;
    this.o.log(
      'warn',
      `cluster: routing again ${events.length} accepted event${events.length === 1 ? '' : 's'} of a replica that stopped without finishing them`,
    );
    for (const e of events) {
      this.adopted.add(e.eventId);
      if (this.adopted.size > MAX_ADOPTED) this.adopted.delete(this.adopted.values().next().value!);
    }
    this.resuming(events.map((e) => e.eventId));
    this.o.dispatcher().resume(events);
  }

  private syncEndpoints(): void {
    for (const [id, record] of this.records) {
      const e = this.endpointsById.get(id);
      if (!e || e.record !== record) this.endpointsById.set(id, new QueuedEndpoint(this, record, this.ttlMs + this.renewMs));
    }
    for (const id of [...this.endpointsById.keys()]) if (!this.records.has(id)) this.endpointsById.delete(id);
  }

  /** Whether a queued event for `pluginId` can be taken now by someone: it is enabled, and its holder (if any) runs it. */
  isAvailable(pluginId: string): boolean {
    if (this.held.has(pluginId)) {
      if (this.launching.has(pluginId)) return true;
      const s = this.rt.status(pluginId)?.state;
      return s === 'running' || s === 'starting' || s === 'restartPending';
    }
    const lease = this.leases.get(pluginId);
    if (!lease?.live) return true; // nobody holds it now: the next holder takes the rows
    const s = (lease.status as RuntimeStatus | null)?.state;
    return s === undefined || s === 'running' || s === 'starting' || s === 'restartPending';
  }

  private localEndpoint(pluginId: string): PluginEndpoint | undefined {
    if (!this.held.has(pluginId)) return undefined;
    const e = this.rt.endpoint(pluginId);
    return e?.isAvailable() ? e : undefined;
  }

  // ---- the worker ----

  private onNotice(n: QueueNotice): void {
    if (n.k === 'new') {
      if (this.held.has(n.p)) void this.pump(n.p);
    } else if (n.k === 'decided' || n.k === 'done') {
      if (n.o !== this.o.replica && !this.adopted.has(n.e)) return;
      const w = this.waiters.get(`${n.e}\u0000${n.p}`);
      if (!w || w.local) return;
      // The notification carries what was recorded: answered without reading the row (nor its replies, when they came too).
      if (n.k === 'decided' && n.d) return w.decide(n.d as DeliveryOutcome);
      if (n.k === 'done' && n.d && n.r) return this.finishWaiter(w, n.c, n.r as OutboundRecord[], n.d as DeliveryOutcome);
      void this.o.queue.get(n.e, n.p).then(
        (row) => row && this.settle(w, row),
        () => undefined,
      );
    } else if (n.k === 'lease') {
      void this.o.leases.list().then(
        (all) => (this.leases = new Map(all.map((l) => [l.pluginId, l]))),
        () => undefined,
      );
    } else if (n.k === 'answer') {
      if (n.to === this.o.replica) this.answers.get(n.id)?.(n.answer);
    } else if (n.k === 'control' && n.to === this.o.replica && this.held.has(n.p)) {
      const rt = this.rt;
      const act: () => Promise<unknown> = {
        stop: () => this.stopHere(n.p),
        restart: () => rt.restart(n.p),
        settings: () => rt.applySettings(n.p),
      }[n.action];
      const answerTo = n.id !== undefined && n.from !== undefined ? { id: n.id, from: n.from } : undefined;
      void act()
        .then(
          (result) => (n.action === 'settings' ? result : this.withReplica(result as RuntimeStatus)),
          (e: Error) => {
            this.o.log('warn', `could not ${n.action} ${n.p} as another replica asked: ${e.message}`);
            return undefined;
          },
        )
        .then(async (result) => {
          // Answered at once: the asking replica's request returns as soon as this one acted.
          if (answerTo) await this.o.queue.answer(n.p, answerTo.from, answerTo.id, result ?? null);
        })
        .catch((e: Error) => this.o.log('warn', `could not answer the ${n.action} of ${n.p}: ${e.message}`));
    }
  }

  /** Claims and delivers the waiting rows of a held plugin, as many as its queue takes. */
  private async pump(pluginId: string): Promise<void> {
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
        const endpoint = this.localEndpoint(pluginId);
        if (!endpoint) return;
        const c = endpoint.routing().concurrency;
        const room =
          (c?.maxConcurrentEvents ?? RUNTIME_DEFAULTS.maxConcurrentEvents) +
          (c?.queueCapacity ?? RUNTIME_DEFAULTS.queueCapacity) -
          (this.inflight.get(pluginId) ?? 0);
        const limit = Math.min(room, 100);
        const rows = await this.o.queue.claim(pluginId, limit, true, this.epochOf(pluginId));
        // Rows may remain when the claim took as many as there was room for (or none fitted).
        if (limit <= 0 || rows.length === limit) this.backlog.add(pluginId);
        else this.backlog.delete(pluginId);
        for (const row of rows) this.deliverRow(endpoint, row as QueuedDelivery & { event: MessageEvent });
        // Again only when a notice came meanwhile, or when the claim was full and room is left.
        if (!this.pumpAgain.has(pluginId) && !(rows.length > 0 && rows.length === limit && limit < room)) return;
      }
    } catch (e) {
      this.o.log('warn', `cluster: could not claim queued events of ${pluginId}: ${(e as Error).message}`);
    } finally {
      this.pumping.delete(pluginId);
    }
  }

  private deliverRow(
    endpoint: PluginEndpoint,
    row: { eventId: string; pluginId: string; origin: string; event: unknown; attempts?: number },
    waiter?: Waiter,
    queued?: Promise<boolean>,
  ): void {
    const { eventId, pluginId, origin } = row;
    const key = `${eventId}\u0000${pluginId}`;
    this.inflight.set(pluginId, (this.inflight.get(pluginId) ?? 0) + 1);
    // Replies of a first delivery are all sent here: the origin gets their records with the outcome.
    const sent = { records: [] as (OutboundRecord | null)[], complete: (row.attempts ?? 1) === 1, noting: [] as Promise<void>[] };
    this.sentReplies.set(key, sent);
    const handled = () => {
      const h = this.handling.get(pluginId);
      h?.delete(eventId);
      if (h?.size === 0) this.handling.delete(pluginId);
    };
    // Handed to the plugin (its queue slot taken, its reply reference open): sends from here on are this handling's.
    const tracked: PluginEndpoint = {
      pluginId,
      transport: endpoint.transport,
      routing: () => endpoint.routing(),
      isAvailable: () => endpoint.isAvailable(),
      deliver: (event, sink) => {
        const h = this.handling.get(pluginId) ?? new Map<string, { sends: number }>();
        this.handling.set(pluginId, h.set(eventId, { sends: 0 }));
        if ((row.attempts ?? 1) > 1) void this.sendLeftOver(eventId, pluginId).catch(() => undefined);
        const d = endpoint.deliver(event, sink);
        void d.completion.finally(handled);
        return d;
      },
    };
    const handed = this.o.dispatcher().deliverDirect(tracked, row.event as MessageEvent);
    // The event's origin waiting in this process is told directly; another replica through the row.
    const here = () => waiter ?? (origin === this.o.replica ? this.waiters.get(`${eventId}\u0000${pluginId}`) : undefined);
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
        // The replies are marked sent before anyone learns the outcome: a handling repeated after a crash sends none again.
        await Promise.all(sent.noting);
        const replies = sent.complete && this.sentReplies.get(key) === sent ? sent.records.filter((r) => r !== null) : undefined;
        // The origin waiting here learns it at once; its event stays in the inbox until its final record is written,
        // which comes after the outcome's row below.
        const w = here();
        w?.decide(decision);
        w?.complete(completion);
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
        if (this.sentReplies.get(key) === sent) this.sentReplies.delete(key);
        handled();
        this.inflight.set(pluginId, (this.inflight.get(pluginId) ?? 1) - 1);
        // Room again for rows a claim left waiting (each new row is announced, and the lease round claims too).
        if (this.backlog.has(pluginId)) void this.pump(pluginId);
      });
  }

  /**
   * Events the previous run of this replica left in its inbox, routed again
   * now: a local delivery of one first reads the queue row that run wrote.
   */
  resuming(eventIds: readonly string[]): void {
    for (const id of eventIds) this.resumed.add(id);
  }

  /** Brings what the queue recorded of `waiters`' rows to them (a row found finished, written by an earlier run). */
  private async recheckWaiters(waiters: readonly Waiter[]): Promise<void> {
    const rows = await this.o.queue.settled(waiters).catch(() => []);
    for (const row of rows) {
      const w = this.waiters.get(`${row.eventId}\u0000${row.pluginId}`);
      if (w) this.settle(w, row);
    }
  }

  /** Reads the rows of deliveries this replica waits for longer than `olderThan` ms (notifications may be lost). */
  private async recheck(olderThan: number): Promise<void> {
    const now = Date.now();
    const waiting = [...this.waiters.values()].filter((w) => !w.local && now - w.since >= olderThan);
    for (let i = 0; i < waiting.length; i += 500) await this.recheckWaiters(waiting.slice(i, i + 500));
  }

  /** Brings a recorded row's decision, completion and replies to the waiting origin. */
  private settle(w: Waiter, row: QueuedDelivery): void {
    if (row.decision) w.decide(row.decision as DeliveryOutcome);
    if (row.state !== 'done' || !row.decision || w.finishing) return;
    w.finishing = true;
    // Delivered by this process after all (it took the lease meanwhile): the host's sink noted its replies on the record.
    if (row.claimedBy === this.o.queue.claimer) return w.complete((row.completion as CompletionOutcome | null) ?? { error: null });
    void this.o.queue.replies(w.eventId, w.pluginId).then(
      (replies) =>
        this.finishWaiter(
          w,
          row.completion,
          replies.map((r) => r.outbound as OutboundRecord | null),
        ),
      () => w.complete((row.completion as CompletionOutcome | null) ?? { error: null }),
    );
  }

  /** Adds the plugin's replies (delivered by another process) to the event's record and completes the waiting origin. */
  private finishWaiter(w: Waiter, completion: unknown, replies: readonly (OutboundRecord | null)[], decision?: DeliveryOutcome): void {
    if (decision) w.decide(decision);
    if (decision && w.finishing) return;
    w.finishing = true;
    const record = this.o.dispatcher().events.get(w.eventId);
    if (record) {
      for (const r of replies) if (r) record.outbound.push(r);
      if (replies.length) this.o.dispatcher().events.publish({ type: 'outbound', record });
    }
    w.complete((completion as CompletionOutcome | null) ?? { error: null });
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

/**
 * A stdio plugin as the dispatcher of every replica sees it in a cluster:
 * routed by its manifest, delivered through the durable queue. Its waits are
 * longer than the plugin's own by the takeover bound, so an event queued
 * while the plugin moves is not given up at the origin (the holder applies the
 * plugin's own ACK timeout and deadline).
 */
class QueuedEndpoint implements PluginEndpoint {
  readonly transport = 'stdio-jsonrpc' as const;
  readonly pluginId: string;
  private readonly routingValue: PluginRouting;

  constructor(
    private readonly cluster: Cluster,
    readonly record: StdioPluginRecord,
    takeoverMilliseconds: number,
  ) {
    this.pluginId = record.pluginId;
    const m = record.manifest;
    const c = m.concurrency;
    const max = c?.maxConcurrentEvents ?? RUNTIME_DEFAULTS.maxConcurrentEvents;
    const capacity = c?.queueCapacity ?? RUNTIME_DEFAULTS.queueCapacity;
    this.routingValue = {
      pluginId: this.pluginId,
      eventSubscriptions: m.eventSubscriptions ?? [],
      commands: m.commands ?? [],
      permissions: m.permissions ?? [],
      // The plugin's own limits apply where it runs; here, events wait for its queue there.
      concurrency: {
        maxConcurrentEvents: max + capacity,
        queueCapacity: capacity,
        overflowPolicy: c?.overflowPolicy ?? 'reject',
        handlerDeadlineMilliseconds:
          (c?.handlerDeadlineMilliseconds ?? RUNTIME_DEFAULTS.handlerDeadlineMilliseconds) + takeoverMilliseconds,
      },
      requestTimeoutMilliseconds: RUNTIME_DEFAULTS.requestTimeoutMilliseconds + takeoverMilliseconds,
      canIntercept: m.permissions?.includes('messages.intercept') ?? false,
    };
  }

  routing(): PluginRouting {
    return this.routingValue;
  }

  isAvailable(): boolean {
    return this.cluster.isAvailable(this.pluginId);
  }

  deliver(event: MessageEvent): Delivery {
    return this.cluster.deliverQueued(this.pluginId, event);
  }
}
