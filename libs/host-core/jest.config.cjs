module.exports = { ...require('../../jest.preset.cjs'), displayName: 'host-core', rootDir: __dirname };
