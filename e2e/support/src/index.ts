// Helpers the end-to-end projects share: the built host as a real process, the steps of a plugin author, and the
// SDK toolchains that build plugins.
export * from './host-process';
export * from './author-flow';
export * from './isolation-modes';
export * from './sdk-builds';
