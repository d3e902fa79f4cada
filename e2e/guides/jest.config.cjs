module.exports = { ...require('../../jest.preset.cjs'), displayName: 'e2e-guides', rootDir: __dirname, testTimeout: 600000 };
