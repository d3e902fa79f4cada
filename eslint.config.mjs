import nx from '@nx/eslint-plugin';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';

// Module boundaries: dependencies point one way, protocol <- engine <- apps,
// in two dimensions: scope (who may use a library) and type (its layer).
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
  // Layers: a library imports only its own layer or the ones below it.
  //   type:contract  schemas, catalogues and interfaces (protocol, messages, host-core)
  //   type:data      implementations of the store contracts
  //   type:engine    installer, runtime, dispatch, HTTP transport, console
  //   type:api       the admin API
  //   type:app       the composition root
  { sourceTag: 'type:contract', onlyDependOnLibsWithTags: ['type:contract'] },
  { sourceTag: 'type:data', onlyDependOnLibsWithTags: ['type:contract', 'type:data'] },
  { sourceTag: 'type:engine', onlyDependOnLibsWithTags: ['type:contract', 'type:data', 'type:engine'] },
  { sourceTag: 'type:api', onlyDependOnLibsWithTags: ['type:contract', 'type:data', 'type:engine', 'type:api'] },
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:contract', 'type:data', 'type:engine', 'type:api'] },
  { sourceTag: 'type:sdk', onlyDependOnLibsWithTags: ['type:contract', 'type:sdk'] },
  { sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['type:contract', 'type:sdk', 'type:tool'] },
];

// Browser-safe libraries (tag platform:browser) also run in the admin app, so
// their sources may not import Node built-ins. The list is read from the
// project tags: tagging a library is all it takes. Specs run in Node only.
const libsDir = new URL('./libs/', import.meta.url);
export const browserLibSources = readdirSync(libsDir, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(new URL(`${d.name}/project.json`, libsDir)))
  .filter((d) => JSON.parse(readFileSync(new URL(`${d.name}/project.json`, libsDir), 'utf8')).tags?.includes('platform:browser'))
  .map((d) => `libs/${d.name}/src/**/*.{ts,tsx}`);
const nodeBuiltinMessage =
  'Browser-safe libraries (tag platform:browser) must not import Node built-ins. Use a web API, or move this code to a platform:node library.';

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
    files: browserLibSources,
    ignores: ['**/*.spec.ts', '**/*.spec.tsx'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: builtinModules.filter((m) => !m.startsWith('_')).map((name) => ({ name, message: nodeBuiltinMessage })),
          patterns: [{ group: ['node:*'], message: nodeBuiltinMessage }],
        },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', '**/*.spec.tsx', 'e2e/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
];
