// The admin API's contract (schemas, route contracts, error body) lives in the
// browser-safe @host/admin-api; it is re-exported for host code.
export * from '@host/admin-api';
export * from './app';
export * from './auth';
export * from './auth-throttle';
export * from './openapi';
export * from './plugin-view';
export * from './settings';
export * from './upload-slots';
export * from './session';
export * from './admin-app';
export * from './log-followers';
export { reapDoctorProcesses, DOCTOR_RUN_TIMEOUT_MILLISECONDS, type DoctorIsolation } from './routes/doctor-routes';
export { statsRoutes, type StatsSource, type StatsRouteDeps, type PluginRecent } from './routes/stats-routes';
export { eventLogRoutes, type EventLogRouteDeps } from './routes/event-log-routes';
