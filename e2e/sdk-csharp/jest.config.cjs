module.exports = { ...require('../../jest.preset.cjs'), displayName: 'e2e-sdk-csharp', rootDir: __dirname, testTimeout: 300000 };
