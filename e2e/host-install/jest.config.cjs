module.exports = { ...require('../../jest.preset.cjs'), displayName: 'e2e-host-install', rootDir: __dirname, testTimeout: 120000 };
