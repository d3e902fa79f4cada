// Real processes (the built host, a stdio plugin) against the fake platform: one worker.
module.exports = { ...require('../../jest.preset.cjs'), displayName: 'e2e-qqbot', rootDir: __dirname, testTimeout: 90_000, maxWorkers: 1 };
