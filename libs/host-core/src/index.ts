export * from './paths';
export * from './errors';
export * from './records';
export * from './store';
export * from './endpoint';
export * from './chat-events';
export * from './runtime';
export * from './serial-queue';
export * from './backoff';
export * from './store-availability';
export * from './keyed-lock';
export * from './settings-store';
export * from './archive-bytes';
export * from './pending-update-store';
export * from './event-log-store';
export * from './admin-session-store';
export * from './replay-store';
export * from './event-inbox';
export * from './media-store';
// How a component contributes admin API routes (console, HTTP registration, ...)
// and how every route answers errors; the admin API mounts them all in one table.
export * from './routes/route-table';
export * from './routes/error-handler';
export * from './routes/json-body';
export * from './manifest-diff';
