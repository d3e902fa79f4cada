// The install benchmarks' package: a realistic Node plugin archive, the same bytes on every call.
import { buildZip, testManifest, type ZipEntrySpec } from '@host/host-installer/testing';
import { seededRandom } from '../src/versioned-package';

let random = seededRandom(42);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;

const WORDS = [
  'function',
  'return',
  'const',
  'let',
  'if',
  'else',
  'for',
  'while',
  'await',
  'async',
  'module',
  'exports',
  'require',
  'this',
  'value',
  'options',
  'callback',
  'error',
  'result',
  'buffer',
  'length',
  'index',
  'object',
  'string',
  'number',
  'undefined',
  'null',
  'true',
  'false',
  'new',
  'Promise',
  'resolve',
  'reject',
  'prototype',
  'typeof',
  'instanceof',
] as const;

/** JavaScript-looking text that compresses about as well as real minified-ish sources. */
const BOILERPLATE = [
  "'use strict';",
  'Object.defineProperty(exports, "__esModule", { value: true });',
  'var __importDefault = (this && this.__importDefault) || function (mod) {',
  '    return (mod && mod.__esModule) ? mod : { "default": mod };',
  '};',
  '    if (typeof options !== "object" || options === null) {',
  '        throw new TypeError("The options argument must be an object");',
  '    }',
  '    return new Promise(function (resolve, reject) {',
  '});',
] as const;

function sourceText(bytes: number): string {
  let out = '';
  while (out.length < bytes) {
    if (random() < 0.7) {
      out += `${pick(BOILERPLATE)}\n`;
      continue;
    }
    const id = `${pick(WORDS)}${Math.floor(random() * 8)}`;
    out += `  ${pick(WORDS)} ${id} = ${pick(WORDS)}(${pick(WORDS)}, ${Math.floor(random() * 4)});\n`;
  }
  return out.slice(0, bytes);
}

/** About 4,000 entries, ~18 MB unpacked, ~5 MB zipped: sources, JSON, folders and incompressible binaries. */
export function realisticPluginArchive(): { zip: Buffer; entries: number; unpacked: number } {
  random = seededRandom(42);
  const entries: ZipEntrySpec[] = [
    { name: 'manifest.json', data: JSON.stringify(testManifest({ pluginId: 'com.example.bench', version: '1.0.0' }), null, 2) },
    { name: 'index.js', data: sourceText(4000) },
    { name: 'package.json', data: '{"name": "bench-plugin", "version": "1.0.0"}\n' },
    { name: 'node_modules/' },
  ];
  let unpacked = 0;
  for (let p = 0; entries.length < 3960; p++) {
    const pkg = `node_modules/pkg-${p}`;
    entries.push({ name: `${pkg}/` }, { name: `${pkg}/lib/` });
    entries.push({ name: `${pkg}/package.json`, data: `{"name": "pkg-${p}", "version": "${p}.0.0", "main": "lib/index.js"}\n` });
    const files = 8 + Math.floor(random() * 20);
    for (let f = 0; f < files; f++) {
      const size = 1700 + Math.floor(random() * 6600);
      unpacked += size;
      entries.push({ name: `${pkg}/lib/file-${f}.js`, data: sourceText(size) });
    }
  }
  for (let b = 0; b < 40; b++) {
    const data = Buffer.alloc(42_000 + Math.floor(random() * 8_000));
    for (let i = 0; i < data.length; i++) data[i] = Math.floor(random() * 256);
    unpacked += data.length;
    entries.push({ name: `node_modules/native-${b}.node`, data, unixMode: 0o100755 });
  }
  for (const e of entries) if (typeof e.name === 'string' && e.name.endsWith('/')) e.unixMode = 0o040755;
  return { zip: buildZip(entries), entries: entries.length, unpacked };
}
