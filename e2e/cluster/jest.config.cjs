module.exports = { ...require('../../jest.preset.cjs'), displayName: 'e2e-cluster', rootDir: __dirname };
