module.exports = { ...require('../../jest.preset.cjs'), displayName: 'host-runtime', rootDir: __dirname };
