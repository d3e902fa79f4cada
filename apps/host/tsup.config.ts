import { defineConfig } from 'tsup';

// One CommonJS file: the workspace libraries (@host/*) are bundled from their
// TypeScript sources; npm packages stay external and load from node_modules.
export default defineConfig({
  // doctor-worker: the process the host forks to run the conformance suite (POST /api/plugins/{pluginId}/doctor).
  entry: { main: 'apps/host/src/main.ts', 'doctor-worker': 'libs/plugin-conformance/src/worker-main.ts' },
  outDir: 'dist/apps/host',
  format: ['cjs'],
  platform: 'node',
  target: 'node20',
  outExtension: () => ({ js: '.cjs' }),
  tsconfig: 'tsconfig.base.json',
  noExternal: [/^@host\//],
  skipNodeModulesBundle: false,
  external: ['@electric-sql/pglite', 'adm-zip', 'express', 'ipaddr.js', 'multer', 'pg', 'prom-client', 'undici', 'vscode-jsonrpc', 'zod'],
  sourcemap: true,
  clean: true,
  splitting: false,
  dts: false,
  // A new data directory's embedded database is a copy of this template (made once, cached in node_modules/.cache).
  onSuccess: 'node tools/scripts/ts-run.mjs apps/host/scripts/embedded-template.ts dist/apps/host',
});
