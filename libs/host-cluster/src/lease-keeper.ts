import type { PluginEndpoint, RegistryStore, RuntimeStatus, StdioPluginRecord } from '@host/host-core';
import type { StdioPluginRuntime } from '@host/host-runtime';
import type { SqlEventInbox } from '@host/host-store';
import type { MessageEvent } from '@host/protocol';
import { LEASE_TIMINGS, type PluginLease, type SqlLeases } from './sql-leases';

/** Where the cluster's parts log. */
export type ClusterLog = (level: 'info' | 'warn' | 'error', message: string) => void;

/** What the other parts ask of the lease keeper: which plugins this process runs, and under which epoch. */
export interface HeldLeases {
  readonly replica: string;
  /** Whether other replicas share the database (a PostgreSQL server). */
  readonly shared: boolean;
  /** How much longer than a plugin's own waits an origin waits for it: the bound of a takeover (ttl + renew). */
  readonly takeoverMilliseconds: number;
  /** Whether this process holds the lease of `pluginId` (as of its last round). */
  holds(pluginId: string): boolean;
  /** The local runtime's endpoint of a plugin this process holds, when it takes events now. */
  localEndpoint(pluginId: string): PluginEndpoint | undefined;
  /** Whether a queued event for `pluginId` can be taken now by someone: its holder (if any) runs it. */
  isAvailable(pluginId: string): boolean;
  /** The lease epoch fenced statements check (replicas sharing the server only). */
  epochOf(pluginId: string): number | undefined;
}

/** What a lease round asks of the other parts. */
export interface LeaseRoundHooks {
  /** The enabled stdio plugins as read (each round, and after an operator's start): their queued endpoints. */
  pluginsRead(records: ReadonlyMap<string, StdioPluginRecord>): void;
  /** Rows of a plugin this process holds may wait: claim them. */
  claim(pluginId: string): void;
  /** Reads the rows of deliveries waited for longer than `olderThanMilliseconds` (notifications may be lost). */
  recheck(olderThanMilliseconds: number): Promise<void>;
  /** Events a gone replica accepted and never finished, taken over by this one: to route again. */
  adopted(events: MessageEvent[]): Promise<void>;
  /** Every 20th round: final rows beyond those kept are forgotten. */
  prune(): Promise<void>;
}

export interface LeaseKeeperOptions {
  replica: string;
  shared: boolean;
  leases: SqlLeases;
  /** This replica's inbox, whose lease round takes over the inbox of a replica that is gone. */
  inbox?: SqlEventInbox;
  store: RegistryStore;
  /** The local runtime, once attached. */
  runtime: () => StdioPluginRuntime | undefined;
  /** Plugins whose package does not validate here: never started. */
  invalid: () => readonly string[];
  log: ClusterLog;
  timings?: { renewMilliseconds?: number; ttlMilliseconds?: number };
  hooks: LeaseRoundHooks;
}

/** How long an origin waits for a queued delivery's row before it reads it again (lost notifications). */
const RECHECK_MILLISECONDS = 2_000;

/**
 * The lease round (every renew interval, and at once when a plugin's record
 * changes): takes free or expired leases of enabled stdio plugins and starts
 * them, renews its own, stops plugins whose lease it lost or which were
 * disabled or removed, and gives those leases up. It keeps the leases as last
 * read, so every part answers from one view of who runs what, and it beats
 * for the replica (`host_replicas`), taking over the inbox of one that is gone.
 */
export class LeaseKeeper implements HeldLeases {
  readonly renewMilliseconds: number;
  readonly ttlMilliseconds: number;
  /** Plugins whose lease this replica holds (as of its last round). */
  private readonly held = new Set<string>();
  /** Every lease as last read, by plugin. */
  private leases = new Map<string, PluginLease>();
  /** Plugins an operator started here just now, by when: kept while the record says `enabled` (written right after). */
  private readonly startedHere = new Map<string, number>();
  /** Plugins this replica took the lease of and is starting (before the runtime says `starting`): events wait for them. */
  private readonly launching = new Set<string>();
  /** Starts of the round that took plugins over at the host's start, which {@link takeOverPlugins} waits for. */
  private readonly booting: Promise<unknown>[] = [];
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> = Promise.resolve();
  private roundAgain = false;
  private firstRound = true;
  private stopped = false;
  private rounds = 0;
  private takeOver = false;

  constructor(private readonly o: LeaseKeeperOptions) {
    this.renewMilliseconds = o.timings?.renewMilliseconds ?? LEASE_TIMINGS.renewMilliseconds;
    this.ttlMilliseconds = o.timings?.ttlMilliseconds ?? LEASE_TIMINGS.ttlMilliseconds;
  }

  get replica(): string {
    return this.o.replica;
  }

  get shared(): boolean {
    return this.o.shared;
  }

  get takeoverMilliseconds(): number {
    return this.ttlMilliseconds + this.renewMilliseconds;
  }

  /** Whether the rounds were stopped ({@link stopRounds}). */
  get isStopped(): boolean {
    return this.stopped;
  }

  private get rt(): StdioPluginRuntime {
    const rt = this.o.runtime();
    if (!rt) throw new Error('The cluster has no runtime attached.');
    return rt;
  }

  /** A first round, then one every renew interval. */
  async open(): Promise<void> {
    await this.runRound();
    this.timer = setInterval(() => void this.runRound(), this.renewMilliseconds);
    this.timer.unref();
  }

  /** Lets the rounds take free and expired leases; waits for the plugins the first such round started. */
  async takeOverPlugins(): Promise<void> {
    this.takeOver = true;
    await this.runRound();
    // The plugins the first round took are started (or failed) when the host's start of its plugins ends, as on a host alone.
    await Promise.all(this.booting.splice(0));
  }

  /** A round soon (a plugin's record changed), so enable, disable and removal act at once. */
  roundSoon(): void {
    void this.runRound();
  }

  /** No round from here on; waits for the one under way. */
  async stopRounds(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.round.catch(() => undefined);
  }

  /** Gives up every lease this process holds, for another replica to take at once. */
  async releaseAll(): Promise<void> {
    for (const id of this.held) await this.o.leases.release(id).catch(() => undefined);
    this.held.clear();
  }

  holds(pluginId: string): boolean {
    return this.held.has(pluginId);
  }

  /** The lease of `pluginId` as last read. */
  lease(pluginId: string): PluginLease | undefined {
    return this.leases.get(pluginId);
  }

  /** A lease changed (a notification): every lease read again. */
  leaseChanged(): void {
    void this.o.leases.list().then(
      (all) => (this.leases = new Map(all.map((l) => [l.pluginId, l]))),
      () => undefined,
    );
  }

  /** The holder answered with the plugin's status: newer than what it published with the lease, which may still be on its way. */
  answered(pluginId: string, lease: PluginLease, status: RuntimeStatus): void {
    this.leases.set(pluginId, { ...lease, status });
  }

  localEndpoint(pluginId: string): PluginEndpoint | undefined {
    if (!this.held.has(pluginId)) return undefined;
    const e = this.rt.endpoint(pluginId);
    return e?.isAvailable() ? e : undefined;
  }

  isAvailable(pluginId: string): boolean {
    if (this.held.has(pluginId)) {
      if (this.launching.has(pluginId)) return true;
      const s = this.rt.status(pluginId)?.state;
      return s === 'running' || s === 'starting' || s === 'restartPending';
    }
    const lease = this.leases.get(pluginId);
    if (!lease?.live) return true; // nobody holds it now: the next holder takes the rows
    const s = lease.status?.state;
    return s === undefined || s === 'running' || s === 'starting' || s === 'restartPending';
  }

  /**
   * The lease epoch fenced statements check for `pluginId` (claims, recorded replies and sends): with replicas
   * sharing the server only; a host alone has nobody to lose its lease to.
   */
  epochOf(pluginId: string): number | undefined {
    return this.o.shared ? this.o.leases.epochs.get(pluginId) : undefined;
  }

  withReplica(status: RuntimeStatus): RuntimeStatus {
    // A host alone on its embedded database names no replica: there is no other.
    if (!this.o.shared) return status;
    return { ...status, replica: this.o.replica };
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
    if (!lease) return this.rt.status(pluginId);
    const published = lease.status;
    if (lease.holder === '') return published ?? this.rt.status(pluginId);
    if (lease.live) return { ...(published ?? { state: 'starting', crashCount: 0 }), replica: lease.holder };
    // Its replica stopped renewing the lease (it died or lost the database): another one takes the plugin over.
    return {
      ...(published ?? { crashCount: 0 }),
      state: 'restartPending',
      stateReason: `replica ${lease.holder} stopped renewing the lease of ${pluginId}; another replica takes it over`,
    };
  }

  /** The runtime reports a status change of a plugin: published with its lease for the other replicas. */
  statusChanged(pluginId: string, status: RuntimeStatus): void {
    if (this.stopped || !this.held.has(pluginId)) return;
    void this.o.leases.publishStatus(pluginId, status).catch(() => undefined);
    if (status.state === 'running') this.o.hooks.claim(pluginId);
  }

  /**
   * An operator's start here: takes the lease unless another replica runs the plugin (then it stays there);
   * answers whether this process holds it now.
   */
  async takeHere(pluginId: string): Promise<boolean> {
    if (!this.held.has(pluginId)) {
      const lease = this.leases.get(pluginId) ?? (await this.readLease(pluginId));
      const elsewhere = lease?.live && lease.holder !== '' && lease.holder !== this.o.replica;
      const got = await this.o.leases.acquire([pluginId], !elsewhere);
      if (!got.includes(pluginId)) return false;
      this.held.add(pluginId);
      this.o.log('info', `cluster: took the lease of ${pluginId}; starting it on ${this.o.replica}`);
    }
    this.startedHere.set(pluginId, Date.now());
    return true;
  }

  /** An operator's stop of a plugin this replica runs: stopped, and the lease given up with a hold (see SqlLeases.release). */
  async stopHere(pluginId: string): Promise<RuntimeStatus> {
    const status = await this.rt.stop(pluginId, 'operator');
    await this.letGo(pluginId, status);
    return status;
  }

  /** Gives up the lease of a plugin this replica holds but runs nothing of, publishing `status` with it. */
  private async letGo(pluginId: string, status: RuntimeStatus): Promise<void> {
    this.held.delete(pluginId);
    this.startedHere.delete(pluginId);
    await this.o.leases.release(pluginId, status, this.ttlMilliseconds);
    await this.readLease(pluginId);
  }

  /** Reads one plugin's lease into the cache. */
  async readLease(pluginId: string): Promise<PluginLease | undefined> {
    const lease = (await this.o.leases.list()).find((l) => l.pluginId === pluginId);
    if (lease) this.leases.set(pluginId, lease);
    else this.leases.delete(pluginId);
    return lease;
  }

  /** Reads the enabled stdio plugins (and those an operator started here just now) and makes their endpoints. */
  async refreshPlugins(): Promise<Map<string, StdioPluginRecord>> {
    const invalid = new Set(this.o.invalid());
    const records = new Map<string, StdioPluginRecord>();
    const now = Date.now();
    // Kept while the start runs (a slow machine may take longer than two rounds), then two rounds more.
    for (const [id, at] of this.startedHere)
      if (this.o.runtime()?.status(id)?.state === 'starting') this.startedHere.set(id, now);
      else if (now - at > 2 * this.renewMilliseconds) this.startedHere.delete(id);
    for (const r of await this.o.store.list())
      if (r.transport === 'stdio-jsonrpc' && (r.enabled || this.startedHere.has(r.pluginId)) && !invalid.has(r.pluginId))
        records.set(r.pluginId, r);
    this.o.hooks.pluginsRead(records);
    return records;
  }

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

  private async leaseRound(): Promise<void> {
    const rt = this.rt;
    // Only leases held when the round began are judged by what it reads: one an operator's start takes meanwhile
    // (after this round read the plugins or renewed) is judged by the next round.
    const heldBefore = new Set(this.held);
    const records = await this.refreshPlugins();

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
    // Disabled or removed plugins: stopped and their leases given up. One whose start failed runs nothing to stop:
    // its lease goes with the failure as its status, so it stays failed, waiting for the operator, on every replica.
    for (const id of [...this.held]) {
      if (records.has(id) || !heldBefore.has(id)) continue;
      const failed = rt.status(id);
      if (failed?.state === 'failed') await this.letGo(id, failed).catch(() => undefined);
      else await this.stopHere(id).catch((e: Error) => this.o.log('warn', `could not stop ${id}: ${e.message}`));
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
    for (const id of this.held) this.o.hooks.claim(id);
    await this.o.hooks.recheck(RECHECK_MILLISECONDS);
    if (++this.rounds % 20 === 0) await this.o.hooks.prune();
  }

  /**
   * Says this replica is alive, and routes again the events a replica that is gone (it did not beat for a
   * lease's time, and no process of its name came back) accepted and never logged final: nobody else would.
   * Their queue rows say what was delivered already; the outcomes of those reach the event's record here.
   */
  private async adoptOrphans(): Promise<void> {
    await this.o.leases.heartbeat();
    if (!this.o.inbox) return;
    const events = await this.o.inbox.adoptOrphans(this.ttlMilliseconds);
    if (events.length === 0) return;
    this.o.log(
      'warn',
      `cluster: routing again ${events.length} accepted event${events.length === 1 ? '' : 's'} of a replica that stopped without finishing them`,
    );
    await this.o.hooks.adopted(events);
  }
}
