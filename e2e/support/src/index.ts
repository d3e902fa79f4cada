// Helpers the end-to-end projects share: the built host as a real process.
export * from './host-process';
export * from './author-flow';
export * from './isolation-modes';
