/**
 * Property-based fuzzing of message validation, normalisation and the QQ Bot
 * renderer: any input renders to a body or a catalogued error; a body never
 * carries markup the plugin wrote (only the renderer's own mention tags) and
 * never exceeds LIMITS.maxMessageChars. FUZZ_RUNS / FUZZ_SEED as in
 * libs/protocol/src/framing.fuzz.spec.ts; kept counterexamples are in
 * fuzz-regressions/renderer.json.
 */
import { LIMITS, MESSAGE_ERRORS } from '@host/protocol';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { countCodePoints } from './escape';
import { renderMessage } from './registry';

const RUNS = Number(process.env['FUZZ_RUNS']) || Number(process.env['FUZZ_LONG_RUNS']) || 200;
const PARAMS = { numRuns: RUNS, ...(process.env['FUZZ_SEED'] ? { seed: Number(process.env['FUZZ_SEED']) } : {}) };
const TIMEOUT = 60_000 + RUNS * 20;

interface Case {
  message: unknown;
  target: unknown;
}

const markup = fc.constantFrom(
  '<',
  '>',
  '&',
  '&amp;',
  '&lt;',
  '<qqbot-at-everyone />',
  '<qqbot-at-user id="1" />',
  '<b>',
  '"',
  '\u0000',
  '\ud800',
  '😀',
  'é',
);
const text = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.array(fc.oneof(markup, fc.string({ maxLength: 4 })), { maxLength: 12 }).map((a) => a.join('')),
  fc.constantFrom('<'.repeat(1001), 'a'.repeat(4000), 'a'.repeat(4001), '😀'.repeat(2001)),
);
const mentionId = fc.oneof(
  fc.constantFrom('u1', 'A.b:c@d-e_f', 'x'.repeat(128), 'x'.repeat(129), '"><b>', '', ' '),
  fc.string({ maxLength: 8 }),
);
const leaf = fc.oneof(
  fc.record({ type: fc.constant('text'), text }),
  fc.record(
    { type: fc.constant('mention'), target: fc.constantFrom('user', 'everyone', 'all'), id: mentionId, displayName: text },
    { requiredKeys: ['type', 'target'] },
  ),
  fc.jsonValue({ maxDepth: 2 }),
);
const { part } = fc.letrec<{ part: unknown }>((tie) => ({
  part: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({ type: fc.constant('composite'), parts: fc.array(tie('part'), { maxLength: 4 }) }),
  ),
}));
const caseArb: fc.Arbitrary<Case> = fc.record({
  message: fc.oneof(
    fc.record({ format: fc.constantFrom('text', 'markdown', 'html', undefined), parts: fc.array(part, { maxLength: 8 }) }),
    fc.jsonValue({ maxDepth: 3 }),
  ),
  target: fc.oneof(
    fc.record({
      type: fc.constantFrom('group', 'channel', 'user', 'direct', 'other'),
      id: fc.oneof(mentionId, fc.constantFrom('.', '..', 'g1')),
    }),
    fc.jsonValue({ maxDepth: 2 }),
  ),
});

const OWN_TAGS = /<qqbot-at-everyone \/>|<qqbot-at-user id="[A-Za-z0-9_.:@-]{1,128}" \/>/g;

function checkCase(c: Case): void {
  let r;
  try {
    r = renderMessage('qqbot', c.message as never, c.target as never);
  } catch (e) {
    // A target that did not pass TargetSchema is the caller's bug, not a crash to accept; report it as one.
    throw new Error(`renderMessage threw: ${(e as Error).message}`);
  }
  if (!r.ok) {
    expect(Object.keys(MESSAGE_ERRORS)).toContain(r.error.code);
    return;
  }
  const body = r.value as { msg_type: number; content?: string; markdown?: { content: string } };
  const content = body.msg_type === 2 ? body.markdown!.content : body.content!;
  expect(typeof content).toBe('string');
  expect(countCodePoints(content)).toBeLessThanOrEqual(LIMITS.maxMessageChars);
  const bare = content.replace(OWN_TAGS, '');
  const type = (c.target as { type: string }).type;
  if (type === 'channel' || type === 'direct') {
    // Guild chats: the platform unescapes once, so only entities may carry & < >, and no text says @everyone.
    expect(bare).not.toMatch(/[<>]/);
    expect(bare).not.toMatch(/&(?!amp;|lt;|gt;)/);
    expect(bare).not.toMatch(/@everyone/);
  } else {
    // Groups and one-to-one chats show text as typed: no < opens a tag (a word joiner follows it, or Markdown's backslash precedes it).
    const opening = body.msg_type === 2 ? /(?<!\\)<(?=[A-Za-z@#!/])/ : /<(?=[A-Za-z@#!/])/;
    expect(bare).not.toMatch(opening);
  }
}

const regressions = JSON.parse(readFileSync(join(__dirname, '../fuzz-regressions/renderer.json'), 'utf8')) as {
  cases: { name: string; input: Case }[];
};

describe('renderer (fuzz)', () => {
  it.each(regressions.cases.map((c) => [c.name, c.input] as const))('regression: %s', (_name, input) => checkCase(input));

  it(
    'renders content whose only tags are its own, within the limit, or returns a catalogued error, for any input',
    () => {
      fc.assert(fc.property(caseArb, checkCase), PARAMS);
    },
    TIMEOUT,
  );
});
