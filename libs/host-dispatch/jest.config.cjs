module.exports = { ...require('../../jest.preset.cjs'), displayName: 'host-dispatch', rootDir: __dirname };
