// Test helpers, imported as @host/host-store/testing. Not part of the package's main entry point.
export * from './registry-store-contract';
