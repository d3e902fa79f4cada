import nx from '@nx/eslint-plugin';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { builtinModules } from 'node:module';
import prettierConfig from 'eslint-config-prettier';
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
  // owner:host marks a browser-safe library that holds the host's own contract (libs/host-errors: the admin
  // API's, installer's, runtime's and QQ Bot's error codes), shared with the admin app. No SDK may use it, so
  // no host code reaches an SDK's public API.
  { sourceTag: 'scope:sdk', notDependOnLibsWithTags: ['owner:host'] },
  { sourceTag: 'scope:host', onlyDependOnLibsWithTags: ['scope:protocol', 'scope:shared', 'scope:host'] },
  // use:tools marks a host library the CLI tools may import as well: the conformance runner
  // (libs/plugin-conformance), so `host-plugin doctor` starts a plugin with the host's own
  // launch, process-group and installer code instead of a copy of it. Nothing else of the host.
  { sourceTag: 'scope:tools', onlyDependOnLibsWithTags: ['scope:protocol', 'scope:shared', 'scope:sdk', 'scope:tools', 'use:tools'] },
  { sourceTag: 'scope:e2e', onlyDependOnLibsWithTags: ['*'] },
  { sourceTag: 'platform:browser', onlyDependOnLibsWithTags: ['platform:browser'] },
  // Layers: a library imports only its own layer or the ones below it.
  //   type:contract  schemas, catalogues and interfaces (protocol, messages, host-errors, host-core)
  //   type:util      small helpers that hold no contract of ours (host-fs: atomic file writes, /proc)
  //   type:data      implementations of the store contracts
  //   type:engine    installer, runtime, dispatch, HTTP transport, console
  //   type:api       the admin API
  //   type:app       the composition root
  { sourceTag: 'type:contract', onlyDependOnLibsWithTags: ['type:contract'] },
  { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util'] },
  { sourceTag: 'type:data', onlyDependOnLibsWithTags: ['type:contract', 'type:util', 'type:data'] },
  { sourceTag: 'type:engine', onlyDependOnLibsWithTags: ['type:contract', 'type:util', 'type:data', 'type:engine'] },
  { sourceTag: 'type:api', onlyDependOnLibsWithTags: ['type:contract', 'type:util', 'type:data', 'type:engine', 'type:api'] },
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:contract', 'type:util', 'type:data', 'type:engine', 'type:api'] },
  { sourceTag: 'type:sdk', onlyDependOnLibsWithTags: ['type:contract', 'type:sdk'] },
  { sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['type:contract', 'type:sdk', 'type:tool', 'use:tools'] },
];

// Browser-safe projects (tag platform:browser: libraries under libs/ and
// applications under apps/, such as the admin app) run in the browser, so
// their sources may not import Node built-ins, nor the protocol's Node entry
// point (@host/protocol/node) that the tag check cannot tell from the
// browser-safe @host/protocol. The list is read from the project tags:
// tagging a project is all it takes. Specs run in Node only.
export function browserProjectSources(rootUrl) {
  const sources = [];
  for (const group of ['libs', 'apps']) {
    const dir = new URL(`${group}/`, rootUrl);
    if (!existsSync(dir)) continue;
    for (const d of readdirSync(dir, { withFileTypes: true })) {
      const project = new URL(`${d.name}/project.json`, dir);
      if (!d.isDirectory() || !existsSync(project)) continue;
      if (JSON.parse(readFileSync(project, 'utf8')).tags?.includes('platform:browser'))
        sources.push(`${group}/${d.name}/src/**/*.{ts,tsx}`);
    }
  }
  return sources;
}
export const browserSources = browserProjectSources(new URL('./', import.meta.url));

const nodeBuiltinMessage =
  'Browser-safe projects (tag platform:browser) must not import Node built-ins. Use a web API, or move this code to a platform:node library.';
const protocolNodeMessage =
  'Browser-safe projects (tag platform:browser) must not import @host/protocol/node (Node-only helpers). Use @host/protocol, or move this code to a platform:node library.';

/** The import rules of browser-safe sources (`files`: globs of browserProjectSources). */
export function browserImportRules(files) {
  if (files.length === 0) return [];
  return [
    {
      files,
      ignores: ['**/*.spec.ts', '**/*.spec.tsx', '**/*.spec-helper.ts'],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            paths: [
              ...builtinModules.filter((m) => !m.startsWith('_')).map((name) => ({ name, message: nodeBuiltinMessage })),
              { name: '@host/protocol/node', message: protocolNodeMessage },
            ],
            patterns: [
              { group: ['node:*'], message: nodeBuiltinMessage },
              { group: ['@host/protocol/node/*'], message: protocolNodeMessage },
            ],
          },
        ],
      },
    },
  ];
}

// host-core is the host's contract layer and a leaf: records, store and runtime interfaces, the provider
// contract, errors. It may use @host/protocol (the wire facts below it), @host/host-errors (the host's own
// error codes, beside the wire catalogue) and npm packages that are not a web framework, nothing else of ours: routing glue is host-routes', admin API shapes are admin-api's, file
// helpers are host-fs'. The tag rules alone would let it import the other contracts (admin-api, messages).
const hostCoreMessage =
  'host-core is a leaf of contracts: it may import @host/protocol and @host/host-errors and no other library of ours. Move the shared type down to @host/protocol or host-core, or put this code in the library that needs it.';
const hostCoreExpressMessage = 'host-core imports no web framework: Express routing glue belongs in @host/host-routes (or @host/host-api).';
export const hostCoreImportRules = [
  {
    files: ['libs/host-core/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['express', 'multer', 'body-parser'].map((name) => ({ name, message: hostCoreExpressMessage })),
          patterns: [
            { group: ['express/*', 'multer/*'], message: hostCoreExpressMessage },
            { group: ['@host/*', '!@host/protocol', '!@host/protocol/node', '!@host/host-errors'], message: hostCoreMessage },
          ],
        },
      ],
    },
  },
];

export default [
  { ignores: ['**/dist', '**/node_modules', '**/.nx', '**/coverage', '**/vendor', '**/*.cjs', '**/*.mjs', 'tmp/**', 'data/**'] },
  ...nx.configs['flat/base'],
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    rules: {
      '@nx/enforce-module-boundaries': ['error', { enforceBuildableLibDependency: false, allow: [], depConstraints }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  ...browserImportRules(browserSources),
  ...hostCoreImportRules,
  {
    files: ['**/*.spec.ts', '**/*.spec.tsx', 'e2e/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  // Formatting is Prettier's (`npm run format`); stylistic lint rules that would fight it are off.
  prettierConfig,
];
