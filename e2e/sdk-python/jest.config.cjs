module.exports = { ...require('../../jest.preset.cjs'), displayName: 'e2e-sdk-python', rootDir: __dirname, testTimeout: 120000 };
