import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { applyBlocks } from '@host/protocol';
import { hostDocBlocks } from '../src/index';

// Rewrites the host's generated blocks: its error tables in docs/protocol/v2.md section 11.3 and its codes in
// docs/troubleshooting.md. The other blocks of both pages are the protocol's (`npx nx run protocol:docs`).
const file = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const blocks = hostDocBlocks();
for (const [path, name, own] of [
  [file('../../../docs/protocol/v2.md'), 'v2.md', blocks.spec],
  [file('../../../docs/troubleshooting.md'), 'troubleshooting.md', blocks.troubleshooting],
] as const) {
  writeFileSync(path, applyBlocks(readFileSync(path, 'utf8'), own, name, 'any'));
  console.log(`wrote ${Object.keys(own).join(', ')} into ${name}`);
}
