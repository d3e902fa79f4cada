import type { RuntimeStatus } from '@host/host-core';
import type { OutboundRecord } from '@host/host-dispatch';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { codeLabel, tapEventLog, type EventLogFeed } from './event-log-tap';
import { defineFamilies, type CircuitView, type HostFamilies, type ScrapeReaders } from './families';
import { RuntimeTap } from './runtime-tap';
import type { StatsRing } from './stats-ring';
import { timeStore } from './store-timing';

export interface HostMetricsOptions {
  /** prom-client's process and Node.js metrics (memory, CPU, event-loop lag, ...) with the host_ prefix; default true. */
  defaultMetrics?: boolean;
}

/** What the host's parts answer at scrape time; each defaults to nothing until the host attaches it. */
export type MetricSources = Partial<ScrapeReaders>;

/**
 * The host's Prometheus registry. Facts are observed where they are produced, with small taps: the
 * event log's updates (events, deliveries, outcomes, latencies), the outbound sink's observer (replies
 * and sends), the stdio runtime's status changes (crashes, restarts), store calls (a timing proxy), and
 * scrape-time readers of state kept elsewhere (queues, refusals, HTTP circuits). Nothing here changes
 * how the host works; a host without metrics does not create it.
 */
export class HostMetrics {
  readonly registry = new Registry();
  private readonly families: HostFamilies;
  private readonly sources: Required<MetricSources> = {
    queues: () => [],
    refusals: () => ({ hostBacklog: 0 }),
    circuits: () => [],
  };
  private readonly runtimeTap: RuntimeTap;

  constructor(options: HostMetricsOptions = {}) {
    this.families = defineFamilies([this.registry], {
      queues: () => this.sources.queues(),
      refusals: () => this.sources.refusals(),
      circuits: () => this.sources.circuits(),
    });
    this.runtimeTap = new RuntimeTap(this.families);
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'host_' });
  }

  /** Sets the scrape-time readers (queues, refusals, circuits). */
  attach(sources: MetricSources): void {
    Object.assign(this.sources, sources);
  }

  /** Follows the dispatcher's event log, feeding the dashboard's `stats` too; returns the function that stops it. */
  observeEventLog(feed: EventLogFeed, stats?: StatsRing): () => void {
    return tapEventLog(feed, this.families, stats);
  }

  /** One reply or send a plugin asked for, as the outbound sink recorded it (error or not). */
  outbound(provider: string, out: Pick<OutboundRecord, 'kind' | 'error'>): void {
    this.families.outbound.inc({ provider, kind: out.kind, result: out.error ? codeLabel(out.error.code) : 'ok' });
  }

  /** A stdio plugin's status changed (the runtime's onStatusChange). */
  pluginStatus(pluginId: string, status: RuntimeStatus): void {
    this.runtimeTap.statusChanged(pluginId, status);
  }

  /** `store` with its asynchronous calls timed under `name` (host_store_operation_duration_seconds). */
  timeStore<T extends object>(store: T, name: string): T {
    return timeStore(store, name, this.families.storeSeconds);
  }

  /** The exposition in Prometheus' text format, and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

export type { CircuitView };
