export * from './atomic-write';
export * from './json-registry-store';
export * from './data-dir-lock';
