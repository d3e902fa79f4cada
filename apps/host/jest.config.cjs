// Host specs compose whole hosts on the embedded database (PGlite), whose start takes seconds on a loaded
// machine; the ceiling only stops a hung test, it measures nothing.
module.exports = { ...require('../../jest.preset.cjs'), displayName: 'host', rootDir: __dirname, testTimeout: 30_000 };
