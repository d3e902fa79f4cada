import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Methods, type MethodDescriptor } from '@host/protocol';
import { parseParams } from './params-validator';

interface RpcCase {
  name: string;
  method: string;
  part: 'params' | 'result';
  input: unknown;
}

const vectors = (JSON.parse(readFileSync(join(__dirname, '../../../protocol/vectors/rpc-method.json'), 'utf8')) as { cases: RpcCase[] })
  .cases;
const token = 't'.repeat(43);
const text = (t: string) => ({ type: 'text', text: t });

/** Inputs around the narrowed fast path: nesting, every part kind, near misses. */
const extra: [string, Record<string, unknown>][] = [
  [
    'composite',
    { token, eventId: 'e1', message: { parts: [text('a'), { type: 'composite', parts: [text('b'), { type: 'composite', parts: [] }] }] } },
  ],
  [
    'every part kind',
    {
      token,
      eventId: 'e1',
      message: {
        format: 'markdown',
        parts: [{ type: 'mention', target: 'user', id: 'u', displayName: 'U' }, { type: 'mention', target: 'everyone' }, text('x')],
      },
    },
  ],
  ['unknown part', { token, eventId: 'e1', message: { parts: [{ type: 'image', url: 'x' }] } }],
  ['extra key on a part', { token, eventId: 'e1', message: { parts: [{ type: 'text', text: 'x', bold: true }] } }],
  ['extra key on the message', { token, eventId: 'e1', message: { parts: [], color: 'red' } }],
  ['extra key on the params', { token, eventId: 'e1', message: { parts: [] }, trace: 'x' }],
  ['blank event id', { token, eventId: '   ', message: { parts: [] } }],
  ['parts not an array', { token, eventId: 'e1', message: { parts: 'hi' } }],
  ['part null', { token, eventId: 'e1', message: { parts: [null] } }],
  ['no message', { token, eventId: 'e1' }],
  ['mention without id', { token, eventId: 'e1', message: { parts: [{ type: 'mention', target: 'user' }] } }],
  ['composite with a bad child', { token, eventId: 'e1', message: { parts: [{ type: 'composite', parts: [{ type: 'text' }] }] } }],
];

describe('parseParams', () => {
  const cases: [string, MethodDescriptor, unknown][] = [
    ...vectors
      .filter((c) => c.part === 'params' && (c.method === Methods.reply.method || c.method === Methods.send.method))
      .map((c): [string, MethodDescriptor, unknown] => [c.name, c.method === Methods.reply.method ? Methods.reply : Methods.send, c.input]),
    ...extra.map(([name, input]): [string, MethodDescriptor, unknown] => [`reply: ${name}`, Methods.reply, input]),
    ...extra.map(([name, input]): [string, MethodDescriptor, unknown] => {
      const { eventId: _e, ...rest } = input;
      return [`send: ${name}`, Methods.send, { ...rest, target: { type: 'group', id: 'g1' } }];
    }),
    ['log.write', Methods.log, { token, level: 'info', message: 'x' }],
    ['params null', Methods.reply, null],
  ];

  it.each(cases)('%s: the same result as the protocol schema', (_name, descriptor, input) => {
    const expected = descriptor.params.safeParse(input);
    const actual = parseParams(descriptor, input);
    expect(actual.success).toBe(expected.success);
    expect(actual.data).toEqual(expected.data);
    expect(actual.error?.issues).toEqual(expected.error?.issues);
  });
});
