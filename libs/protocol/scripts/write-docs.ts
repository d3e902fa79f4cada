import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildJsonSchemas } from '../src/json-schema';
import { applyBlocks, generatedBlocks } from './doc-tables';

// Rewrites the generated tables of docs/protocol/v2.md (see doc-tables.ts).
const file = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const specPath = file('../../../docs/protocol/v2.md');
const blocks = generatedBlocks({
  schemas: buildJsonSchemas(),
  limitsSource: readFileSync(file('../src/limits.ts'), 'utf8'),
  capabilitiesSource: readFileSync(file('../src/capabilities.ts'), 'utf8'),
});
writeFileSync(specPath, applyBlocks(readFileSync(specPath, 'utf8'), blocks));
console.log(`wrote ${Object.keys(blocks).length} generated blocks into docs/protocol/v2.md`);
