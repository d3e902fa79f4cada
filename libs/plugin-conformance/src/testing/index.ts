export { RAW_FAULTS, RAW_PLUGIN_SCRIPT, writeRawFixture, type RawFault } from './raw-fixture';
