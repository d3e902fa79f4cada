module.exports = { ...require('../../jest.preset.cjs'), displayName: 'host-plugin', rootDir: __dirname, testTimeout: 60000 };
