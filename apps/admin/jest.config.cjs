const preset = require('../../jest.preset.cjs');

// The Markdown renderer (react-markdown and the unified packages under it) is
// published as ES modules only: SWC compiles those for the tests as well.
const ESM_ONLY = [
  'react-markdown',
  'unified',
  'bail',
  'devlop',
  'trough',
  'vfile[a-z-]*',
  'unist-[a-z-]+',
  'mdast-[a-z-]+',
  'hast-[a-z-]+',
  'micromark[a-z-]*',
  'remark-[a-z-]+',
  'decode-named-character-reference',
  'character-entities[a-z-]*',
  'property-information',
  'space-separated-tokens',
  'comma-separated-tokens',
  'html-url-attributes',
  'is-plain-obj',
  'zwitch',
  'ccount',
  'trim-lines',
  'longest-streak',
  'estree-util-[a-z-]+',
  'style-to-js',
];

module.exports = {
  ...preset,
  displayName: 'admin',
  rootDir: __dirname,
  testEnvironment: 'jsdom',
  setupFiles: ['<rootDir>/jest.setup.cjs'],
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`],
  transform: {
    '^.+\\.(t|j)sx?$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript', tsx: true }, target: 'es2022', transform: { react: { runtime: 'automatic' } } },
        module: { type: 'commonjs' },
      },
    ],
  },
};
