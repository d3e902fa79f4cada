// How a component contributes admin API routes (console, HTTP registration, QQ Bot, ...)
// and how every route answers errors; the admin API mounts them all in one table.
export * from './route-table';
export * from './error-handler';
export * from './json-body';
