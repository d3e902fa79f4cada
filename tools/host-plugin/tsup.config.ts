import { defineConfig } from 'tsup';

// One self-contained file: the protocol schemas (and zod) are bundled, so the
// CLI runs with nothing installed beside it.
export default defineConfig({
  entry: { cli: 'src/main.ts' },
  format: ['cjs'],
  outExtension: () => ({ js: '.cjs' }),
  noExternal: [/^@host\//, 'zod'],
  platform: 'node',
  target: 'node20',
  banner: { js: '#!/usr/bin/env node' },
  clean: true,
  tsconfig: 'tsconfig.json',
});
