module.exports = { ...require('../../jest.preset.cjs'), displayName: 'host-cluster', rootDir: __dirname };
