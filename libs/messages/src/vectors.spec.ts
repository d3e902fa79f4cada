import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MESSAGE_ERRORS, type MessageErrorCode, type OutgoingMessageInput, type Target } from '@host/protocol';
import { normalizeMessage, renderMessage, type MessageResult } from './index';

// The shared vectors are the contract every SDK and the host implement; this
// spec runs every case of both files against this library.
const dir = join(__dirname, '../../protocol/vectors/rendering');

interface VectorFile<C> {
  kind: string;
  description: string;
  cases: C[];
}
type Expect<K extends string, V> = { [P in K]: V } | { error: MessageErrorCode };
interface RenderingCase {
  name: string;
  provider: string;
  message: OutgoingMessageInput;
  target: Target;
  expect: Expect<'body', unknown>;
}
interface NormalizationCase {
  name: string;
  message: OutgoingMessageInput;
  expect: Expect<'normalized', unknown>;
}

function load<C>(file: string, kind: string): VectorFile<C> {
  const data = JSON.parse(readFileSync(join(dir, file), 'utf8')) as VectorFile<C>;
  expect(data).toEqual({ kind, description: expect.any(String), cases: expect.any(Array) });
  return data;
}

const rendering = load<RenderingCase>('qqbot-rendering.json', 'rendering');
const normalization = load<NormalizationCase>('normalization.json', 'normalization');
const richRendering = load<RenderingCase>('rich-qqbot-rendering.json', 'rich-rendering');
const richNormalization = load<NormalizationCase>('rich-normalization.json', 'rich-normalization');

function check(result: MessageResult<unknown>, expected: object, key: string): void {
  const { error: code, ...rest } = expected as { error?: MessageErrorCode } & Record<string, unknown>;
  if (code !== undefined) {
    expect(result).toEqual({ ok: false, error: { code, message: expect.any(String) } });
    // The message starts with the catalogue's advice and then says what exactly is wrong.
    const message = (result as { error: { message: string } }).error.message;
    const advice = MESSAGE_ERRORS[code].message;
    expect(message.startsWith(advice)).toBe(true);
    expect(message.length).toBeGreaterThan(advice.length);
  } else {
    expect(Object.keys(rest)).toEqual([key]);
    expect(result).toEqual({ ok: true, value: rest[key] });
  }
}

describe('rendering vectors (qqbot-rendering.json)', () => {
  it.each(rendering.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    check(renderMessage(c.provider, c.message, c.target), c.expect, 'body');
  });
});

describe('normalization vectors (normalization.json)', () => {
  it.each(normalization.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    check(normalizeMessage(c.message), c.expect, 'normalized');
  });
});

describe('rich rendering vectors (rich-qqbot-rendering.json)', () => {
  it.each(richRendering.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    check(renderMessage(c.provider, c.message, c.target), c.expect, 'body');
  });
});

describe('rich normalization vectors (rich-normalization.json)', () => {
  it.each(richNormalization.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    check(normalizeMessage(c.message), c.expect, 'normalized');
  });
});

describe('vector coverage', () => {
  const errorsOf = (cases: { expect: object }[]) =>
    new Set(cases.flatMap((c) => ('error' in c.expect ? [(c.expect as { error: string }).error] : [])));

  it('has at least 40 cases with unique names', () => {
    const names = [...rendering.cases, ...normalization.cases].map((c) => c.name);
    expect(names.length).toBeGreaterThanOrEqual(40);
    expect(new Set(rendering.cases.map((c) => c.name)).size).toBe(rendering.cases.length);
    expect(new Set(normalization.cases.map((c) => c.name)).size).toBe(normalization.cases.length);
  });

  it('covers every error code rendering can produce', () => {
    expect([...errorsOf(rendering.cases)].sort()).toEqual(
      [
        'message.empty',
        'message.format.unsupported_target',
        'message.mention.invalid_id',
        'message.mention.unsupported_target',
        'message.part.unsupported',
        'message.parts.too_many',
        'message.target.invalid',
        'message.too_long',
      ].sort(),
    );
  });

  it('covers every error code images, files and keyboards add', () => {
    expect([...errorsOf([...richRendering.cases, ...richNormalization.cases])].sort()).toEqual(
      [
        'message.format.unsupported_target',
        'message.keyboard.invalid',
        'message.keyboard.too_large',
        'message.keyboard.unsupported_format',
        'message.media.too_many',
        'message.part.unsupported',
        'message.part.unsupported_target',
      ].sort(),
    );
  });

  it('covers every error code normalisation can produce', () => {
    expect([...errorsOf(normalization.cases)].sort()).toEqual(
      ['message.empty', 'message.mention.invalid_id', 'message.part.unsupported', 'message.parts.too_many'].sort(),
    );
  });
});
