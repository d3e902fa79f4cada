// One long test against real processes: no parallel workers, and a timeout
// that follows the soak duration (SOAK_SECONDS).
const seconds = Number(process.env.SOAK_SECONDS) || Number(process.env.SOAK_LONG_SECONDS) || 45;
module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'e2e-soak',
  rootDir: __dirname,
  testTimeout: (seconds + 180) * 1000,
  maxWorkers: 1,
};
