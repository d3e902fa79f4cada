// Test helpers, imported as @host/host-store/testing. Not part of the package's main entry point.
export * from './registry-store-contract';
export * from './settings-store-contract';
export * from './pending-update-store-contract';
export * from './event-log-store-contract';
export * from './replay-store-contract';
export * from './package-archive-store-contract';
export * from './postgres-server';
export * from './embedded-database';
