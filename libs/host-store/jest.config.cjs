module.exports = { ...require('../../jest.preset.cjs'), displayName: 'host-store', rootDir: __dirname };
