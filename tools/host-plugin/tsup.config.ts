import { defineConfig } from 'tsup';

// One self-contained file: the protocol schemas (and zod) are bundled, so the
// CLI runs with nothing installed beside it; so are the host pieces doctor
// starts plugins with (and the JSON-RPC and ZIP libraries they use).
export default defineConfig({
  entry: { cli: 'src/main.ts' },
  format: ['cjs'],
  outExtension: () => ({ js: '.cjs' }),
  noExternal: [/^@host\//, 'zod', 'vscode-jsonrpc', 'adm-zip'],
  platform: 'node',
  target: 'node20',
  banner: { js: '#!/usr/bin/env node' },
  clean: true,
  tsconfig: 'tsconfig.json',
});
