// Real processes: generous per-test time, and suites one at a time so the
// two CPU cores are not oversubscribed by parallel plugin processes.
module.exports = { ...require('../../jest.preset.cjs'), displayName: 'e2e-runtime', rootDir: __dirname, testTimeout: 30000, maxWorkers: 1 };
