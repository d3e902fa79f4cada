import type { z } from 'zod';
import { decodeChunk, findMismatch, loadVectorFiles, VECTOR_KINDS, type FramingChunk, type VectorCase } from './vectors.spec-helper';
import {
  EventAckSchema,
  FrameDecoder,
  MessageEventSchema,
  MessageResponseSchema,
  METHOD_LIST,
  findMethod,
  parseHttpManifest,
  parseStdioManifest,
  validate,
  matchCommand,
  subscriptionsTake,
  type Command,
  type EventSubscription,
  type SubscriptionFacts,
  type ConversationType,
  type ValidationResult,
} from './index';

// Runs every shared vector whose kind this library implements. The same files
// drive the Python, Go and C# SDK suites (vectors/README.md); rendering and
// normalization vectors are run by libs/messages.
const files = loadVectorFiles();

describe('vector files', () => {
  it('use only known kinds', () => {
    const unknown = files.filter((f) => !(f.kind in VECTOR_KINDS)).map((f) => `${f.file}: "${f.kind}"`);
    expect(unknown).toEqual([]);
  });

  it('hold at least 80 cases in total', () => {
    const total = files.reduce((n, f) => n + f.cases.length, 0);
    expect(total).toBeGreaterThanOrEqual(80);
  });

  it('name every case uniquely within its file', () => {
    for (const f of files) {
      const names = f.cases.map((c) => c.name);
      expect({ file: f.file, duplicates: names.filter((n, i) => typeof n !== 'string' || names.indexOf(n) !== i) }).toEqual({
        file: f.file,
        duplicates: [],
      });
    }
  });

  it('cover params and result of every method, valid and invalid', () => {
    const rpc = files.filter((f) => f.kind === 'rpc-method').flatMap((f) => f.cases) as RpcCase[];
    const missing: string[] = [];
    for (const m of METHOD_LIST) {
      for (const part of ['params', 'result'] as const) {
        for (const valid of [true, false]) {
          if (!rpc.some((c) => c.method === m.method && c.part === part && c.expect.valid === valid)) {
            missing.push(`${m.method} ${part} ${valid ? 'valid' : 'invalid'}`);
          }
        }
      }
    }
    expect(missing).toEqual([]);
  });
});

interface ManifestCase extends VectorCase {
  input: unknown;
  jsonSchema: boolean;
  expect: { valid: true; output?: unknown } | { errors: { code: string; path: string }[] };
}
interface ShapeCase extends VectorCase {
  input: unknown;
  expect: { valid: true; output?: unknown } | { valid: false; paths?: string[] };
}
interface RpcCase extends ShapeCase {
  method: string;
  part: 'params' | 'result';
}
interface FramingCase extends VectorCase {
  chunks: FramingChunk[];
  expect: ({ message: unknown } | { error: string })[];
}

function checkManifest(c: ManifestCase, r: ValidationResult<unknown>): void {
  if ('errors' in c.expect) {
    const got = r.ok ? [] : r.issues.map(({ code, path }) => ({ code, path }));
    expect(sortIssues(got)).toEqual(sortIssues(c.expect.errors));
  } else {
    expect(r.ok ? [] : r.issues).toEqual([]);
    if (r.ok && c.expect.output !== undefined) expect(findMismatch(r.value, c.expect.output)).toBeNull();
  }
}

function sortIssues(list: { code: string; path: string }[]): string[] {
  return list.map((i) => `${i.path} ${i.code}`).sort();
}

function checkShape(schema: z.ZodType, c: ShapeCase): void {
  const r = validate(schema, c.input, 'event'); // shape cases pin paths only; any domain does
  if (c.expect.valid) {
    expect(r.ok ? [] : r.issues).toEqual([]);
    if (r.ok && c.expect.output !== undefined) expect(findMismatch(r.value, c.expect.output)).toBeNull();
  } else {
    expect(r.ok).toBe(false);
    // Without paths a case pins the verdict only (a fault inside a union, see vectors/README.md).
    const paths = r.ok ? [] : [...new Set(r.issues.map((i) => i.path))].sort();
    if (c.expect.paths) expect(paths).toEqual([...c.expect.paths].sort());
  }
}

function runFraming(c: FramingCase): unknown[] {
  const decoder = new FrameDecoder();
  const events = [...c.chunks.flatMap((chunk) => decoder.push(decodeChunk(chunk))), ...decoder.end()];
  return events.map((e) => (e.kind === 'message' ? { message: e.message } : { error: e.code }));
}

const SHAPES: Record<string, z.ZodType> = {
  'message-event': MessageEventSchema,
  'event-ack': EventAckSchema,
  'message-response': MessageResponseSchema,
};

const RUNNERS: Partial<Record<keyof typeof VECTOR_KINDS, (c: VectorCase) => void>> = {
  'stdio-manifest': (c) => checkManifest(c as ManifestCase, parseStdioManifest((c as ManifestCase).input)),
  'http-manifest': (c) => checkManifest(c as ManifestCase, parseHttpManifest((c as ManifestCase).input)),
  framing: (c) => expect(runFraming(c as FramingCase)).toEqual((c as FramingCase).expect),
  'message-event': (c) => checkShape(SHAPES['message-event'] as z.ZodType, c as ShapeCase),
  'event-ack': (c) => checkShape(SHAPES['event-ack'] as z.ZodType, c as ShapeCase),
  'message-response': (c) => checkShape(SHAPES['message-response'] as z.ZodType, c as ShapeCase),
  'command-match': (c) => {
    const mc = c as unknown as { text: string; commands: Command[]; conversation: ConversationType; expect: unknown };
    const found = matchCommand(mc.text, mc.commands, mc.conversation);
    expect(found ? { ...found.match, index: found.index } : null).toEqual(mc.expect);
  },
  'event-routing': (c) => {
    const rc = c as unknown as { subscriptions: EventSubscription[]; event: SubscriptionFacts; expect: { delivered: boolean } };
    expect(subscriptionsTake(rc.subscriptions, rc.event)).toBe(rc.expect.delivered);
  },
  'rpc-method': (c) => {
    const rc = c as RpcCase;
    const m = findMethod(rc.method);
    expect(m?.method).toBe(rc.method);
    if (m) checkShape(rc.part === 'params' ? m.params : m.result, rc);
  },
};

it('runs every kind whose owner is this library', () => {
  const own = Object.entries(VECTOR_KINDS)
    .filter(([, owner]) => owner === 'protocol')
    .map(([k]) => k);
  expect(own.filter((k) => !(k in RUNNERS))).toEqual([]);
});

for (const f of files) {
  const run = RUNNERS[f.kind as keyof typeof VECTOR_KINDS];
  if (!run) continue;
  describe(`vectors/${f.file} (${f.kind})`, () => {
    it.each(f.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => run(c));
  });
}
