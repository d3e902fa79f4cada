// The built host and real plugin processes: generous per-test time, one suite at a time.
module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'e2e-observability',
  rootDir: __dirname,
  testTimeout: 120000,
  maxWorkers: 1,
};
