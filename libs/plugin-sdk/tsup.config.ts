import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { defineConfig, type Options } from 'tsup';

type EsbuildPlugin = NonNullable<Options['esbuildPlugins']>[number];

// zod ships error messages in 40+ languages and pulls all of them in through
// its `locales` namespace; the SDK uses only the English default, so the
// namespace is replaced by one that holds just `en` (about 300 KB less per
// module kind in every packed plugin).
const zodEnglishOnly: EsbuildPlugin = {
  name: 'zod-english-only',
  setup(build) {
    const en = createRequire(import.meta.url).resolve('zod/v4/locales/en.js');
    build.onResolve({ filter: /[\\/]locales[\\/]index\.c?js$/ }, (args) =>
      /[\\/]zod[\\/]/.test(args.importer) ? { path: 'zod-locales-en', namespace: 'zod-locales' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-locales' }, () => ({
      contents: `export { default as en } from ${JSON.stringify(en)};`,
      resolveDir: dirname(en),
    }));
  },
};

// One build for both module kinds. The protocol, message and zod code is
// bundled in, so an installed plugin needs only this package in
// node_modules. Entries share chunks (splitting) so classes such as
// PluginMessageError are the same object whichever subpath imported them.
// Declarations keep @host/* imports here; scripts/finish-build.mjs replaces
// them with plain types so the published .d.ts needs neither zod nor @host/*.
export default defineConfig({
  entry: { index: 'src/index.ts', http: 'src/http/index.ts', testing: 'src/testing/index.ts' },
  format: ['cjs', 'esm'],
  outExtension: ({ format }) => ({ js: format === 'cjs' ? '.cjs' : '.mjs' }),
  dts: { compilerOptions: { noCheck: true } },
  splitting: true,
  noExternal: [/^@host\/(protocol|messages)(\/node)?$/, 'zod'],
  // Kept external in the declaration bundle only (noExternal wins for the JS).
  external: ['express', /^@host\/(protocol|messages)$/],
  esbuildPlugins: [zodEnglishOnly],
  platform: 'node',
  target: 'node20',
  sourcemap: false,
  clean: true,
  tsconfig: 'tsconfig.json',
});
