/**
 * Property-based fuzzing of the archive checks and extraction: hand-built
 * ZIPs with hostile names, kinds, flags, methods and lying sizes, then
 * damaged bytes. Nothing may throw but a HostError with an INSTALL_* code,
 * and nothing may be written outside the target folder. FUZZ_RUNS /
 * FUZZ_SEED as in libs/protocol/src/framing.fuzz.spec.ts; kept
 * counterexamples are in fuzz-regressions/archive.json.
 */
import { HostError } from '@host/host-core';
import fc from 'fast-check';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { readArchive } from './archive';
import { extractEntries } from './extract';
import { inspectPackage } from './inspect';
import type { InstallLimits } from './limits';
import { buildZip, testManifest, type ZipEntrySpec } from './testing';

const RUNS = Number(process.env['FUZZ_RUNS']) || Number(process.env['FUZZ_LONG_RUNS']) || 100;
const PARAMS = { numRuns: RUNS, ...(process.env['FUZZ_SEED'] ? { seed: Number(process.env['FUZZ_SEED']) } : {}) };
const TIMEOUT = 60_000 + RUNS * 50;
const LIMITS: InstallLimits = { maxEntries: 40, maxUnpackedBytes: 64 * 1024, maxCompressionRatio: 20, ratioThresholdBytes: 1024 };

/** A JSON form of an archive: entry specs (bytes in base64) and byte edits applied to the built ZIP. */
interface Case {
  entries: { name: string; data?: string; method?: number; unixMode?: number; flags?: number; declaredSize?: number; rawBody?: string }[];
  edits: { at: number; byte: number }[];
  truncate?: number;
  /** Written with ZIP64 records, and with this comment (base64). */
  zip64?: boolean;
  comment?: string;
  /** Byte changes within the central directory and the end records (offset modulo their length). */
  directoryEdits?: { at: number; byte: number }[];
}

const segment = fc.oneof(
  fc.constantFrom(
    '..',
    '.',
    '',
    'a',
    'A',
    'manifest.json',
    'index.js',
    'C:',
    'con',
    '__MACOSX',
    'x\\..\\y',
    '\u0000',
    'e\u0301',
    '\u00e9',
    'com.example.echo',
  ),
  fc.string({ maxLength: 6 }),
);
const name = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join('/'));
const entry = fc.record(
  {
    name: fc.oneof(
      name,
      name.map((n) => '/' + n),
      name.map((n) => n + '/'),
    ),
    data: fc.oneof(fc.string({ maxLength: 64 }), fc.constant('a'.repeat(4000)), fc.constant(JSON.stringify(testManifest()))),
    method: fc.constantFrom(0, 8, 8, 12, 99),
    unixMode: fc.constantFrom(0o100644, 0o100755, 0o040755, 0o120777, 0o020644, 0o010644, 0),
    flags: fc.constantFrom(0x800, 0, 0x1, 0x40, 0x8),
    declaredSize: fc.nat({ max: 100_000 }),
    rawBody: fc.uint8Array({ maxLength: 32 }).map((b) => Buffer.from(b).toString('base64')),
  },
  { requiredKeys: ['name'] },
);
const caseArb: fc.Arbitrary<Case> = fc.record({
  entries: fc.array(entry, { maxLength: 6 }),
  edits: fc.array(fc.record({ at: fc.nat(), byte: fc.nat({ max: 255 }) }), { maxLength: 3 }),
  truncate: fc.option(fc.nat(), { nil: undefined }),
});

/** Valid packages written with or without ZIP64 records and a comment, then changed only in their central directory and end records. */
const directoryCaseArb: fc.Arbitrary<Case> = fc
  .record({
    entries: fc
      .array(entry, { maxLength: 3 })
      .map((extra) => [{ name: 'manifest.json', data: JSON.stringify(testManifest()) }, { name: 'index.js', data: 'x' }, ...extra]),
    edits: fc.constant<Case['edits']>([]),
    zip64: fc.boolean(),
    comment: fc.oneof(
      fc.constant(undefined),
      fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b).toString('base64')),
      // An end record's signature inside the comment, as a second end record would have.
      fc
        .uint8Array({ maxLength: 30 })
        .map((b) => Buffer.concat([Buffer.from(b), Buffer.from([0x50, 0x4b, 0x05, 0x06]), Buffer.alloc(18)]).toString('base64')),
    ),
    directoryEdits: fc.array(fc.record({ at: fc.nat(), byte: fc.nat({ max: 255 }) }), { minLength: 1, maxLength: 4 }),
  })
  .map(({ comment, ...rest }): Case => (comment === undefined ? rest : { ...rest, comment }));

function zipOf(c: Case): Buffer {
  const specs: ZipEntrySpec[] = c.entries.map((e) => ({
    name: e.name,
    ...(e.data === undefined ? {} : { data: e.data }),
    ...(e.method === undefined ? {} : { method: e.method }),
    ...(e.unixMode === undefined ? {} : { unixMode: e.unixMode }),
    ...(e.flags === undefined ? {} : { flags: e.flags }),
    ...(e.declaredSize === undefined ? {} : { declaredSize: e.declaredSize }),
    ...(e.rawBody === undefined ? {} : { rawBody: Buffer.from(e.rawBody, 'base64') }),
  }));
  let zip = buildZip(specs, {
    ...(c.zip64 ? { zip64: true } : {}),
    ...(c.comment === undefined ? {} : { comment: Buffer.from(c.comment, 'base64') }),
  });
  // Where the central directory starts, as the end record (or the ZIP64 one) says before any edit.
  const end = zip.length - 22 - (c.comment === undefined ? 0 : Buffer.from(c.comment, 'base64').length);
  const start = c.zip64 ? Number(zip.readBigUInt64LE(end - 20 - 56 + 48)) : zip.readUInt32LE(end + 16);
  for (const { at, byte } of c.directoryEdits ?? []) if (zip.length > start) zip[start + (at % (zip.length - start))] = byte;
  for (const { at, byte } of c.edits) if (zip.length) zip[at % zip.length] = byte;
  if (c.truncate !== undefined && zip.length) zip = zip.subarray(0, c.truncate % zip.length);
  return zip;
}

function expectInstallError(e: unknown): void {
  if (!(e instanceof HostError) || !e.code.startsWith('INSTALL_')) throw e;
}

/** Every path under `root`, as lstat sees it: none may be a link. */
function walk(root: string): string[] {
  const out: string[] = [];
  for (const n of readdirSync(root)) {
    const p = join(root, n);
    const st = lstatSync(p);
    expect(st.isSymbolicLink()).toBe(false);
    out.push(p);
    if (st.isDirectory()) out.push(...walk(p));
  }
  return out;
}

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'archive-fuzz-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function checkCase(c: Case): Promise<void> {
  const zip = zipOf(c);
  const root = mkdtempSync(join(scratch, 'run-'));
  const target = join(root, 'target');
  try {
    try {
      inspectPackage(zip, LIMITS);
    } catch (e) {
      expectInstallError(e);
    }
    let files: Parameters<typeof extractEntries>[0]['files'] = [];
    try {
      files = readArchive(zip, LIMITS).entries.map((entry) => ({ entry, path: entry.path, mode: entry.mode }));
    } catch (e) {
      expectInstallError(e);
      return;
    }
    mkdirSync(target);
    try {
      await extractEntries({ destination: target, limits: LIMITS, files });
    } catch (e) {
      expectInstallError(e);
    }
    // Nothing beside the target, nothing in it that leaves it, no more bytes than the budget.
    expect(readdirSync(root)).toEqual(['target']);
    let bytes = 0;
    for (const p of walk(target)) {
      const rel = relative(target, p);
      expect(rel.startsWith('..') || rel.includes(`..${sep}`)).toBe(false);
      if (lstatSync(p).isFile()) bytes += lstatSync(p).size;
    }
    expect(bytes).toBeLessThanOrEqual(LIMITS.maxUnpackedBytes);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const regressions = JSON.parse(readFileSync(join(__dirname, '../fuzz-regressions/archive.json'), 'utf8')) as {
  cases: { name: string; input: Case }[];
};

describe('archive checks and extraction (fuzz)', () => {
  it.each(regressions.cases.map((c) => [c.name, c.input] as const))('regression: %s', (_name, input) => checkCase(input));

  it(
    'throws only INSTALL_* HostErrors and never writes outside the target',
    async () => {
      await fc.assert(fc.asyncProperty(caseArb, checkCase), PARAMS);
    },
    TIMEOUT,
  );

  it(
    'throws only INSTALL_* HostErrors and never writes outside the target when the central directory is damaged',
    async () => {
      await fc.assert(fc.asyncProperty(directoryCaseArb, checkCase), PARAMS);
    },
    TIMEOUT,
  );

  it(
    'throws only INSTALL_* HostErrors on arbitrary bytes',
    () => {
      const bytes = fc.oneof(
        fc.uint8Array({ maxLength: 512 }),
        fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.concat([b, Buffer.from([0x50, 0x4b, 0x05, 0x06]), Buffer.alloc(18)])),
      );
      fc.assert(
        fc.property(bytes, (b) => {
          try {
            inspectPackage(Buffer.from(b), LIMITS);
          } catch (e) {
            expectInstallError(e);
          }
        }),
        PARAMS,
      );
    },
    TIMEOUT,
  );
});
