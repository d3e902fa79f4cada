// Test helpers, imported as @host/host-installer/testing. Not part of the package's main entry point.
export * from './zip-writer';
export * from './tree-snapshot';
export * from './unavailable-runtime';
export * from './attack-corpus';
