import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCatalogs, buildJsonSchemas, serializeSchema } from '../src/index';

// Regenerates libs/protocol/schema/ (JSON Schema) and libs/protocol/catalog/ (catalogues) from the code.
for (const [folder, files] of [
  ['../schema', buildJsonSchemas()],
  ['../catalog', buildCatalogs()],
] as const) {
  const dir = fileURLToPath(new URL(folder, import.meta.url));
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(dir)) if (!(f in files)) rmSync(join(dir, f));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), serializeSchema(content));
  console.log(`wrote ${Object.keys(files).length} files to libs/protocol/${folder.slice(3)}/`);
}
