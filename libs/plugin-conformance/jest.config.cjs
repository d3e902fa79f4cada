module.exports = { ...require('../../jest.preset.cjs'), displayName: 'plugin-conformance', rootDir: __dirname };
