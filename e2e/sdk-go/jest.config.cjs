module.exports = { ...require('../../jest.preset.cjs'), displayName: 'e2e-sdk-go', rootDir: __dirname, testTimeout: 300000 };
