module.exports = { ...require('../../jest.preset.cjs'), displayName: 'host-installer', rootDir: __dirname };
