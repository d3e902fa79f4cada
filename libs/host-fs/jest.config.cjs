module.exports = { ...require('../../jest.preset.cjs'), displayName: 'host-fs', rootDir: __dirname };
