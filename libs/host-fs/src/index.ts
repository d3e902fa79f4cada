export * from './atomic-write';
export * from './process-stat';
