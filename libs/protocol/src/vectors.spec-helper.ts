import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Loads the shared test vectors (libs/protocol/vectors/**.json). The format
 * is described in vectors/README.md; this loader only reads files and decodes
 * framing chunks, so the TypeScript runner reads the files exactly the way an
 * SDK test suite in another language would.
 */
export const VECTORS_DIR = join(__dirname, '..', 'vectors');

export interface VectorCase {
  name: string;
  description?: string;
  [field: string]: unknown;
}

export interface VectorFile {
  /** Path relative to the vectors folder, with "/" separators. */
  file: string;
  kind: string;
  description: string;
  cases: VectorCase[];
}

/** Every vector kind of protocol v2, and the project whose tests run it. */
export const VECTOR_KINDS = {
  'stdio-manifest': 'protocol',
  'http-manifest': 'protocol',
  framing: 'protocol',
  'message-event': 'protocol',
  'event-ack': 'protocol',
  'message-response': 'protocol',
  'rpc-method': 'protocol',
  'command-match': 'protocol',
  'event-routing': 'protocol',
  rendering: 'messages',
  normalization: 'messages',
  'rich-normalization': 'messages',
  'rich-rendering': 'messages',
} as const;

export function loadVectorFiles(dir = VECTORS_DIR): VectorFile[] {
  const out: VectorFile[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.json')) {
        const file = relative(dir, path).split(/[\\/]/).join('/');
        let parsed: unknown;
        try {
          parsed = JSON.parse(readFileSync(path, 'utf8'));
        } catch (e) {
          throw new Error(`vectors/${file} is not valid JSON: ${(e as Error).message}`);
        }
        const v = parsed as Partial<VectorFile>;
        if (typeof v.kind !== 'string' || typeof v.description !== 'string' || !Array.isArray(v.cases)) {
          throw new Error(`vectors/${file} must be {"kind": string, "description": string, "cases": [...]}`);
        }
        out.push({ file, kind: v.kind, description: v.description, cases: v.cases as VectorCase[] });
      }
    }
  };
  walk(dir);
  return out;
}

/** One framing chunk: a UTF-8 string, raw bytes as hex, or a string repeated. */
export type FramingChunk = string | { hex: string } | { repeat: string; times: number };

export function decodeChunk(chunk: FramingChunk): Uint8Array {
  if (typeof chunk === 'string') return new TextEncoder().encode(chunk);
  if ('hex' in chunk) return Uint8Array.from(Buffer.from(chunk.hex, 'hex'));
  return new TextEncoder().encode(chunk.repeat.repeat(chunk.times));
}

/**
 * Deep "contains" check used by `expect.output`: every key of an expected
 * object must match in the actual object; arrays must have the same length
 * and match element by element; an expected empty object or array requires
 * an empty one. Returns the path of the first mismatch, or null.
 */
export function findMismatch(actual: unknown, expected: unknown, path = ''): string | null {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return path || '(root)';
    for (let i = 0; i < expected.length; i++) {
      const m = findMismatch(actual[i], expected[i], `${path}[${i}]`);
      if (m) return m;
    }
    return null;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return path || '(root)';
    const keys = Object.keys(expected);
    if (keys.length === 0 && Object.keys(actual).length !== 0) return path || '(root)';
    for (const k of keys) {
      const m = findMismatch((actual as Record<string, unknown>)[k], (expected as Record<string, unknown>)[k], path ? `${path}.${k}` : k);
      if (m) return m;
    }
    return null;
  }
  return Object.is(actual, expected) ? null : path || '(root)';
}
