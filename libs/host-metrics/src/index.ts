export { HostMetrics, type HostMetricsOptions, type MetricSources, type CircuitView } from './host-metrics';
export { codeLabel, type EventLogFeed } from './event-log-tap';
export { LATENCY_BUCKETS_SECONDS, STORE_BUCKETS_SECONDS } from './families';
