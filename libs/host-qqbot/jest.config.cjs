module.exports = { ...require('../../jest.preset.cjs'), displayName: 'host-qqbot', rootDir: __dirname };
