export { Cluster, type ClusterOptions } from './cluster';
export { LeaseKeeper, type ClusterLog, type HeldLeases, type LeaseKeeperOptions, type LeaseRoundHooks } from './lease-keeper';
export { QueueWorker, type OutcomeListener, type QueueWorkerOptions, type RowToDeliver } from './queue-worker';
export { QueuedEndpoint, QueuedEndpoints, type QueuedEndpointsOptions } from './queued-endpoint';
export { ReplicaControl, type ReplicaControlOptions } from './replica-control';
export { ReplyOutbox, type HandlingRecord, type ReplyOutboxOptions } from './reply-outbox';
export * from './queue-notices';
export * from './sql-leases';
export * from './sql-delivery-queue';
