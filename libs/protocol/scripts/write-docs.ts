import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildJsonSchemas } from '../src/json-schema';
import { applyBlocks, generatedBlocks, HOST_BLOCKS } from './doc-tables';
import { troubleshootingBlocks } from './troubleshooting';

// Rewrites the generated tables of docs/protocol/v2.md (see doc-tables.ts) and the error codes of
// docs/troubleshooting.md (see troubleshooting.ts).
const file = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const specPath = file('../../../docs/protocol/v2.md');
const blocks = generatedBlocks({
  schemas: buildJsonSchemas(),
  limitsSource: readFileSync(file('../src/limits.ts'), 'utf8'),
  capabilitiesSource: readFileSync(file('../src/capabilities.ts'), 'utf8'),
});
writeFileSync(specPath, applyBlocks(readFileSync(specPath, 'utf8'), blocks, 'v2.md', HOST_BLOCKS));
console.log(`wrote ${Object.keys(blocks).length} generated blocks into docs/protocol/v2.md`);
const troubleshootingPath = file('../../../docs/troubleshooting.md');
const codes = troubleshootingBlocks();
writeFileSync(troubleshootingPath, applyBlocks(readFileSync(troubleshootingPath, 'utf8'), codes, 'troubleshooting.md', HOST_BLOCKS));
console.log('wrote the error codes into docs/troubleshooting.md');
