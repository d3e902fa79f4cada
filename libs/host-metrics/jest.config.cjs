module.exports = { ...require('../../jest.preset.cjs'), displayName: 'host-metrics', rootDir: __dirname };
