module.exports = { ...require('../../jest.preset.cjs'), displayName: 'host-console', rootDir: __dirname };
