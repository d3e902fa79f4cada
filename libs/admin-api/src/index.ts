export * from './contract';
export * from './issue';
export * from './errors';
export * from './plugins';
export * from './packages';
export * from './console';
export * from './http-plugins';
export * from './routes';
