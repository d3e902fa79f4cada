import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));
const lib = (path: string) => fileURLToPath(new URL(`../../libs/${path}`, import.meta.url));

// The browser-safe workspace libraries are compiled from their sources, like
// the host's build does; the output is what the host serves at /.
export default defineConfig({
  root,
  base: '/',
  plugins: [react()],
  resolve: {
    alias: {
      '@host/admin-api': lib('admin-api/src/index.ts'),
      '@host/protocol': lib('protocol/src/index.ts'),
      '@host/host-errors': lib('host-errors/src/index.ts'),
      '@host/messages': lib('messages/src/index.ts'),
    },
  },
  build: {
    outDir: fileURLToPath(new URL('../../dist/apps/admin', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // The strict CSP of the host allows no inline script: no inlined module preload helper, no data: scripts.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
});
