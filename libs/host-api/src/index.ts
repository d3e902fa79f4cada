export * from './app';
export * from './auth';
export * from './errors';
export * from './openapi';
export * from './plugin-view';
export * from './route-table';
export * from './schemas';
export * from './settings';
