import type { PluginQueueStats } from '@host/host-dispatch';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** One enabled HTTP plugin's circuit breaker as its health shows it. */
export interface CircuitView {
  pluginId: string;
  circuit: 'closed' | 'open' | 'half-open';
  consecutiveFailures: number;
}

/** What the gauges and the counters kept elsewhere read at each scrape (the state stays where it is). */
export interface ScrapeReaders {
  /** The dispatcher's queueStats(). */
  queues(): Iterable<PluginQueueStats>;
  /** Events refused at admission since the start (the dispatcher's refusals). */
  refusals(): { hostBacklog: number };
  circuits(): Iterable<CircuitView>;
}

const CIRCUIT_STATES = ['closed', 'open', 'half-open'] as const;

/** Seconds from a few milliseconds (an echo) to a minute (a handler near its default deadline). */
export const LATENCY_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds of one store call: sub-millisecond (the file store's memory) to seconds (a database far away or down). */
export const STORE_BUCKETS_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/**
 * Every family the host exports besides prom-client's process and Node.js defaults. Labels are bounded:
 * `provider` by the registered providers, `plugin_id` by the plugins installed or registered since the
 * start, `outcome`, `state`, `kind` and `result` by fixed lists, `code` by the error catalogue
 * (anything else is `other`). User, group and event ids are never labels. docs/operator/metrics.md
 * describes each family; change both together.
 */
export function defineFamilies(registers: Registry[], read: ScrapeReaders) {
  const c = { registers };
  return {
    eventsReceived: new Counter({
      ...c,
      name: 'host_events_received_total',
      help: 'Message events accepted and routed, by the provider they came from.',
      labelNames: ['provider'] as const,
    }),
    eventsRefused: new Counter({
      ...c,
      name: 'host_events_refused_total',
      help: 'Events refused at admission (nothing recorded or delivered; the sender may send them again), by reason.',
      labelNames: ['reason'] as const,
      collect() {
        this.reset();
        this.inc({ reason: 'host_backlog' }, read.refusals().hostBacklog);
      },
    }),
    deliveries: new Counter({
      ...c,
      name: 'host_deliveries_total',
      help: 'Deliveries that reached a final state, by plugin and outcome (completed, declined, failed, expired).',
      labelNames: ['plugin_id', 'outcome'] as const,
    }),
    deliveryErrors: new Counter({
      ...c,
      name: 'host_delivery_errors_total',
      help: "Failed deliveries by plugin and error code (the host's delivery.* or http.* code, or the handler's own catalogue code; other codes are 'other').",
      labelNames: ['plugin_id', 'code'] as const,
    }),
    decisionSeconds: new Histogram({
      ...c,
      name: 'host_delivery_decision_seconds',
      help: "From hand-over to the plugin's queue until its decision (ACK) or the failure standing for it, queue wait included.",
      labelNames: ['plugin_id'] as const,
      buckets: LATENCY_BUCKETS_SECONDS,
    }),
    handlerSeconds: new Histogram({
      ...c,
      name: 'host_handler_duration_seconds',
      help: 'How long an accepted delivery ran until its completion (as the plugin reported it), by plugin.',
      labelNames: ['plugin_id'] as const,
      buckets: LATENCY_BUCKETS_SECONDS,
    }),
    eventSeconds: new Histogram({
      ...c,
      name: 'host_event_duration_seconds',
      help: 'End to end: from receiving an event until every delivery of it was final, by provider (events with at least one recipient).',
      labelNames: ['provider'] as const,
      buckets: LATENCY_BUCKETS_SECONDS,
    }),
    outbound: new Counter({
      ...c,
      name: 'host_outbound_messages_total',
      help: "Replies and sends plugins asked for, by provider, kind (reply, send) and result ('ok' or the error code).",
      labelNames: ['provider', 'kind', 'result'] as const,
    }),
    restarts: new Counter({
      ...c,
      name: 'host_plugin_restarts_total',
      help: 'Automatic restarts of stdio plugins after a crash.',
      labelNames: ['plugin_id'] as const,
    }),
    crashes: new Counter({
      ...c,
      name: 'host_plugin_crashes_total',
      help: 'Crashes of stdio plugins as the runtime counts them: unexpected exits, processes ended for breaking the protocol or hanging, failed restarts.',
      labelNames: ['plugin_id'] as const,
    }),
    pluginState: new Gauge({
      ...c,
      name: 'host_plugin_state',
      help: '1 for the state each stdio plugin is in (running, restartPending, failed, ...), 0 for the others it was in since the host started.',
      labelNames: ['plugin_id', 'state'] as const,
    }),
    waiting: new Gauge({
      ...c,
      name: 'host_plugin_waiting_events',
      help: "Deliveries waiting in each plugin's queue for a free slot.",
      labelNames: ['plugin_id'] as const,
      collect() {
        this.reset();
        for (const q of read.queues()) this.set({ plugin_id: q.pluginId }, q.waiting);
      },
    }),
    active: new Gauge({
      ...c,
      name: 'host_plugin_active_deliveries',
      help: 'Deliveries each plugin is handling now.',
      labelNames: ['plugin_id'] as const,
      collect() {
        this.reset();
        for (const q of read.queues()) this.set({ plugin_id: q.pluginId }, q.active);
      },
    }),
    oldestWait: new Gauge({
      ...c,
      name: 'host_plugin_oldest_waiting_event_age_seconds',
      help: "How long the oldest delivery waiting in each plugin's queue has waited (0 when none waits).",
      labelNames: ['plugin_id'] as const,
      collect() {
        this.reset();
        for (const q of read.queues()) this.set({ plugin_id: q.pluginId }, (q.oldestWaitMilliseconds ?? 0) / 1000);
      },
    }),
    queueExpired: new Counter({
      ...c,
      name: 'host_plugin_expired_events_total',
      help: "Deliveries that waited in a plugin's queue until they could no longer be answered (delivery.expired).",
      labelNames: ['plugin_id'] as const,
      collect() {
        this.reset();
        for (const q of read.queues()) this.inc({ plugin_id: q.pluginId }, q.expired);
      },
    }),
    queueDropped: new Counter({
      ...c,
      name: 'host_plugin_dropped_events_total',
      help: 'Deliveries dropped for newer ones from a full queue (overflowPolicy dropOldest, delivery.dropped).',
      labelNames: ['plugin_id'] as const,
      collect() {
        this.reset();
        for (const q of read.queues()) this.inc({ plugin_id: q.pluginId }, q.dropped);
      },
    }),
    circuit: new Gauge({
      ...c,
      name: 'host_http_plugin_circuit_state',
      help: "1 for the state each enabled HTTP plugin's circuit breaker is in (closed, open, half-open), 0 for the others.",
      labelNames: ['plugin_id', 'state'] as const,
      collect() {
        this.reset();
        for (const v of read.circuits())
          for (const state of CIRCUIT_STATES) this.set({ plugin_id: v.pluginId, state }, v.circuit === state ? 1 : 0);
      },
    }),
    circuitFailures: new Gauge({
      ...c,
      name: 'host_http_plugin_consecutive_failures',
      help: 'Failed deliveries in a row of each enabled HTTP plugin (the circuit opens at its threshold).',
      labelNames: ['plugin_id'] as const,
      collect() {
        this.reset();
        for (const v of read.circuits()) this.set({ plugin_id: v.pluginId }, v.consecutiveFailures);
      },
    }),
    storeSeconds: new Histogram({
      ...c,
      name: 'host_store_operation_duration_seconds',
      help: 'Calls of the registry and settings stores, by store, operation (the method) and result (ok, error).',
      labelNames: ['store', 'operation', 'result'] as const,
      buckets: STORE_BUCKETS_SECONDS,
    }),
  };
}

export type HostFamilies = ReturnType<typeof defineFamilies>;
