module.exports = { ...require('../../jest.preset.cjs'), displayName: 'e2e-http', rootDir: __dirname };
