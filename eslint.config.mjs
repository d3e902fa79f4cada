import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

// Module boundaries: dependencies point one way, protocol <- engine <- apps.
//   scope:protocol  depends on nothing of ours
//   scope:sdk       may use protocol and browser-safe libs, never host code
//   scope:host      host engine and app
//   platform:browser libs are safe for the admin app; the admin app may only
//   import those.
export const depConstraints = [
  { sourceTag: 'scope:protocol', onlyDependOnLibsWithTags: [] },
  { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:protocol', 'scope:shared'] },
  { sourceTag: 'scope:sdk', onlyDependOnLibsWithTags: ['scope:protocol', 'scope:shared', 'scope:sdk'] },
  { sourceTag: 'scope:host', onlyDependOnLibsWithTags: ['scope:protocol', 'scope:shared', 'scope:host'] },
  { sourceTag: 'scope:tools', onlyDependOnLibsWithTags: ['scope:protocol', 'scope:shared', 'scope:sdk', 'scope:tools'] },
  { sourceTag: 'scope:e2e', onlyDependOnLibsWithTags: ['*'] },
  { sourceTag: 'platform:browser', onlyDependOnLibsWithTags: ['platform:browser'] },
];

export default [
  { ignores: ['**/dist', '**/node_modules', '**/.nx', '**/coverage', '**/vendor', '**/*.cjs', '**/*.mjs', 'tmp/**', 'data/**'] },
  ...nx.configs['flat/base'],
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        { enforceBuildableLibDependency: false, allow: [], depConstraints },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    files: ['**/*.spec.ts', '**/*.spec.tsx', 'e2e/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
];
