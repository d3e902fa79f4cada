module.exports = { ...require('../../jest.preset.cjs'), displayName: 'host-api', rootDir: __dirname };
