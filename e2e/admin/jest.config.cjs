module.exports = { ...require('../../jest.preset.cjs'), displayName: 'e2e-admin', rootDir: __dirname, testTimeout: 60000 };
