module.exports = { ...require('../../jest.preset.cjs'), displayName: 'host-http', rootDir: __dirname };
