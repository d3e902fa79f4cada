import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildJsonSchemas, serializeSchema } from '../src/json-schema';

// Regenerates libs/protocol/schema/ from the zod schemas.
const dir = fileURLToPath(new URL('../schema', import.meta.url));
mkdirSync(dir, { recursive: true });
const files = buildJsonSchemas();
for (const f of readdirSync(dir)) if (!(f in files)) rmSync(join(dir, f));
for (const [name, schema] of Object.entries(files)) writeFileSync(join(dir, name), serializeSchema(schema));
console.log(`wrote ${Object.keys(files).length} files to libs/protocol/schema/`);
