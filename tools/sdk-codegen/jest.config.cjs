module.exports = { ...require('../../jest.preset.cjs'), displayName: 'sdk-codegen', rootDir: __dirname };
