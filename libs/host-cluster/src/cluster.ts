import type {
  Delivery,
  OutboundRecord,
  OutboundRequest,
  OutboundSink,
  PluginEndpoint,
  PluginRuntime,
  RegistryStore,
  RuntimeStatus,
} from '@host/host-core';
import type { Dispatcher } from '@host/host-dispatch';
import type { StdioPluginRuntime } from '@host/host-runtime';
import type { SqlEventInbox } from '@host/host-store';
import type { MessageEvent } from '@host/protocol';
import { LeaseKeeper, type ClusterLog } from './lease-keeper';
import type { QueueNotice } from './queue-notices';
import { QueueWorker } from './queue-worker';
import { QueuedEndpoints } from './queued-endpoint';
import { ReplicaControl } from './replica-control';
import { ReplyOutbox } from './reply-outbox';
import type { SqlDeliveryQueue } from './sql-delivery-queue';
import type { SqlLeases } from './sql-leases';

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
  log: ClusterLog;
  timings?: { renewMilliseconds?: number; ttlMilliseconds?: number };
  /**
   * Whether other replicas share the database (a PostgreSQL server). Alone (the embedded database), an event's id
   * reaches this process once, so a local delivery starts while its row is written instead of after.
   */
  shared: boolean;
  /** Final queue rows kept (older ones are pruned with their replies). */
  keepFinished?: number;
}

/**
 * Several hosts on one PostgreSQL server (docs/operator/cluster.md): each
 * enabled stdio plugin runs on the one replica that holds its lease, and
 * every event for it goes through the durable queue, whichever replica took
 * it. This is the replica's part of that, made of five parts that each do one
 * job and know the others through narrow contracts:
 * - {@link LeaseKeeper}: the lease round, and which plugins this process runs;
 * - {@link QueuedEndpoints}: the endpoints the dispatcher routes to, one per
 *   enabled stdio plugin wherever it runs, following each row to its outcome;
 * - {@link QueueWorker}: claims the rows of the plugins held here and
 *   delivers them to the local runtime;
 * - {@link ReplyOutbox}: replies and sends recorded before they are sent;
 * - {@link ReplicaControl}: the runtime the admin API acts on (stop, restart
 *   and settings go to the replica holding the lease).
 * The queue's notifications come here and go to the part they are for; those
 * addressed to other replicas are skipped unread.
 */
export class Cluster {
  private readonly keeper: LeaseKeeper;
  private readonly queued: QueuedEndpoints;
  private readonly worker: QueueWorker;
  private readonly outbox: ReplyOutbox;
  private readonly control: ReplicaControl;
  private stopWatching: (() => Promise<void>) | undefined;
  private rtValue: StdioPluginRuntime | undefined;

  constructor(private readonly o: ClusterOptions) {
    this.rtValue = o.runtime;
    this.keeper = new LeaseKeeper({
      replica: o.replica,
      shared: o.shared,
      leases: o.leases,
      inbox: o.inbox,
      store: o.store,
      runtime: () => this.rtValue,
      invalid: o.invalid,
      log: o.log,
      timings: o.timings,
      hooks: {
        pluginsRead: (records) => this.queued.sync(records),
        claim: (pluginId) => void this.worker.pump(pluginId),
        recheck: (olderThan) => this.queued.recheck(olderThan),
        adopted: (events) => this.queued.adopt(events),
        prune: () => o.queue.prune(o.keepFinished ?? 10_000).then(() => undefined),
      },
    });
    this.outbox = new ReplyOutbox({ records: o.queue.records, leases: this.keeper, dispatcher: o.dispatcher, log: o.log });
    this.worker = new QueueWorker({
      leases: this.keeper,
      queue: o.queue,
      dispatcher: o.dispatcher,
      outbox: this.outbox,
      waiting: (eventId, pluginId) => this.queued.waiting(eventId, pluginId),
      log: o.log,
    });
    this.queued = new QueuedEndpoints({ leases: this.keeper, queue: o.queue, worker: this.worker, dispatcher: o.dispatcher });
    this.control = new ReplicaControl({ keeper: this.keeper, queue: o.queue, runtime: () => this.rt, log: o.log });
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
      () => void this.queued.recheck(0),
      (replica) => this.queued.hears(replica),
    );
    await this.keeper.open();
  }

  /** Lets the rounds take free and expired leases of enabled plugins (the host's start of its plugins). */
  start(): Promise<void> {
    return this.keeper.takeOverPlugins();
  }

  /** A change of a plugin's record (any replica): a lease round soon, so enable, disable and removal act at once. */
  pluginChanged(): void {
    this.keeper.roundSoon();
  }

  /** Stops the rounds, the plugins it runs, and gives their leases up for another replica to take at once. */
  async close(): Promise<void> {
    this.worker.stop();
    await this.keeper.stopRounds();
    await this.stopWatching?.();
    await this.rt.stopAll('hostShutdown');
    // Given up at once: another replica takes the plugins over at its next round.
    await this.keeper.releaseAll();
  }

  /** One endpoint per enabled stdio plugin, wherever it runs. */
  endpoints(): Iterable<PluginEndpoint> {
    return this.queued.endpoints();
  }

  /** Wraps the host's sink: replies, and sends made while handling an event, are numbered and recorded before they are sent. */
  outbound(inner: OutboundSink): OutboundSink {
    return this.outbox.outbound(inner);
  }

  /** Keeps what the host's sink recorded of a request, for the reply's row. */
  observe(request: OutboundRequest, outbound: OutboundRecord): void {
    this.outbox.observe(request, outbound);
  }

  /** Queues `event` for `pluginId` and follows the row to its decision and completion. */
  deliverQueued(pluginId: string, event: MessageEvent): Delivery {
    return this.queued.deliver(pluginId, event);
  }

  /** Whether a queued event for `pluginId` can be taken now by someone: it is enabled, and its holder (if any) runs it. */
  isAvailable(pluginId: string): boolean {
    return this.keeper.isAvailable(pluginId);
  }

  /**
   * Events the previous run of this replica left in its inbox, routed again
   * now: a local delivery of one first reads the queue row that run wrote.
   */
  resuming(eventIds: readonly string[]): void {
    this.queued.resuming(eventIds);
  }

  /** The runtime the admin API and the installer act on. */
  runtimeFacade(): PluginRuntime {
    return this.control.runtime();
  }

  /** The plugin's runtime status, the same on every replica. */
  status(pluginId: string): RuntimeStatus | undefined {
    return this.keeper.status(pluginId);
  }

  /** The runtime reports a status change of a plugin: published with its lease for the other replicas. */
  statusChanged(pluginId: string, status: RuntimeStatus): void {
    this.keeper.statusChanged(pluginId, status);
  }

  private onNotice(n: QueueNotice): void {
    switch (n.k) {
      case 'new':
        if (this.keeper.holds(n.p)) void this.worker.pump(n.p);
        return;
      case 'decided':
      case 'done':
        return this.queued.onOutcome(n);
      case 'lease':
        return this.keeper.leaseChanged();
      case 'answer':
        return this.control.onAnswer(n);
      case 'control':
        return this.control.onControl(n);
    }
  }
}
