// Shared Jest settings: SWC transpiles TypeScript (no type-check at test time;
// `tsc --noEmit` in each project's typecheck target does that), and the
// workspace path aliases of tsconfig.base.json resolve to library sources.
const path = require('node:path');
const { compilerOptions } = require('./tsconfig.base.json');

const moduleNameMapper = {};
for (const [alias, targets] of Object.entries(compilerOptions.paths ?? {})) {
  moduleNameMapper[`^${alias.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`] = path.join(__dirname, targets[0]);
}

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.(t|j)sx?$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript', tsx: true }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
  moduleFileExtensions: ['ts', 'tsx', 'js', 'mjs', 'cjs', 'json'],
  testMatch: ['**/*.spec.ts', '**/*.spec.tsx'],
  moduleNameMapper,
};
