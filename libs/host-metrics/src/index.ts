export { HostMetrics, type HostMetricsOptions, type MetricSources, type CircuitView } from './host-metrics';
export { codeLabel, tapEventLog, type EventLogFeed } from './event-log-tap';
export {
  StatsRing,
  STATS_BUCKET_COUNT,
  STATS_BUCKET_SECONDS,
  STATS_PLUGIN_WINDOW_SECONDS,
  STATS_RESERVOIR_SIZE,
  type PluginRecentView,
  type StatsBucketView,
} from './stats-ring';
export { LATENCY_BUCKETS_SECONDS, STORE_BUCKETS_SECONDS } from './families';
export {
  logDeliveryFailures,
  DELIVERY_FAILURE_LINES_PER_WINDOW,
  DELIVERY_FAILURE_WINDOW_MILLISECONDS,
  type DeliveryFailureLine,
} from './delivery-failure-log';
