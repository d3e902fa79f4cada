// Tests run on the TypeScript sources, compiled by SWC.
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest'] },
  testMatch: ['**/src/**/*.spec.ts'],
};
