module.exports = { ...require('../../jest.preset.cjs'), displayName: 'plugin-sdk', rootDir: __dirname, testTimeout: 30000 };
