module.exports = { ...require('../../jest.preset.cjs'), displayName: 'host-errors', rootDir: __dirname };
