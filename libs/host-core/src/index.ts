export * from './paths';
export * from './errors';
export * from './records';
export * from './store';
export * from './endpoint';
export * from './runtime';
export * from './keyed-lock';
