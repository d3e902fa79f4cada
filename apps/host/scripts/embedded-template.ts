// Puts the embedded database's template beside the host's bundle
// (dist/apps/host/pglite-template), so a new data directory's database is a
// copy of it instead of an initdb run (see libs/host-store/src/sql/embedded-template.ts).
// Run by the host's build (apps/host/tsup.config.ts, onSuccess).
import { BUNDLED_TEMPLATE_DIR, EmbeddedDatabase } from '@host/host-store';
import { join, resolve } from 'node:path';

const outDir = resolve(process.argv[2] ?? 'dist/apps/host');
EmbeddedDatabase.writeTemplate(join(outDir, BUNDLED_TEMPLATE_DIR)).catch((e: Error) => {
  console.error(`the embedded database's template could not be made: ${e.message}`);
  process.exit(1);
});
