export { HostMetrics, type HostMetricsOptions, type MetricSources, type CircuitView } from './host-metrics';
export { codeLabel, type EventLogFeed } from './event-log-tap';
export { LATENCY_BUCKETS_SECONDS, STORE_BUCKETS_SECONDS } from './families';
export {
  logDeliveryFailures,
  DELIVERY_FAILURE_LINES_PER_WINDOW,
  DELIVERY_FAILURE_WINDOW_MILLISECONDS,
  type DeliveryFailureLine,
} from './delivery-failure-log';
