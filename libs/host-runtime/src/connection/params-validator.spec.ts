import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventAckSchema, Methods, type MethodDescriptor } from '@host/protocol';
import { parseEventAck, parseParams } from './params-validator';

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

/** events.completed params, compiled whole: defaults, errors, near misses. */
const completed: [string, unknown][] = [
  ['succeeded', { token, eventId: 'e1', error: null, durationMs: 1.5 }],
  ['error defaults to null', { token, eventId: 'e1' }],
  ['failed with details', { token, eventId: 'e1', error: { code: 'x.y', message: 'why', details: { n: [1] } } }],
  ['error code empty', { token, eventId: 'e1', error: { code: '', message: 'why' } }],
  ['error code too long', { token, eventId: 'e1', error: { code: 'c'.repeat(101), message: 'why' } }],
  ['error without message', { token, eventId: 'e1', error: { code: 'x' } }],
  ['negative duration', { token, eventId: 'e1', durationMs: -1 }],
  ['duration as text', { token, eventId: 'e1', durationMs: '3' }],
  ['blank event id', { token, eventId: ' ', error: null }],
  ['control character in event id', { token, eventId: 'e\u00011' }],
  ['extra key', { token, eventId: 'e1', result: 'ok' }],
  ['no token', { eventId: 'e1' }],
];

describe('parseParams', () => {
  const byMethod = new Map<string, MethodDescriptor>([Methods.reply, Methods.send, Methods.completed].map((m) => [m.method, m]));
  const cases: [string, MethodDescriptor, unknown][] = [
    ...vectors
      .filter((c) => c.part === 'params' && byMethod.has(c.method))
      .map((c): [string, MethodDescriptor, unknown] => [c.name, byMethod.get(c.method)!, c.input]),
    ...completed.map(([name, input]): [string, MethodDescriptor, unknown] => [`events.completed: ${name}`, Methods.completed, input]),
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

describe('parseEventAck', () => {
  const acks: [string, unknown][] = [
    ['accepted', { eventId: 'e1', accepted: true, intercepted: false, error: null }],
    ['defaults', { eventId: 'e1', accepted: false }],
    ['declined with an error', { eventId: 'e1', accepted: false, error: { code: 'x', message: 'why', details: [1] } }],
    ['intercepted', { eventId: 'e1', accepted: true, intercepted: true }],
    ['accepted missing', { eventId: 'e1' }],
    ['accepted as text', { eventId: 'e1', accepted: 'yes' }],
    ['blank event id', { eventId: '  ', accepted: true }],
    ['error code empty', { eventId: 'e1', accepted: false, error: { code: '', message: 'm' } }],
    ['extra key', { eventId: 'e1', accepted: true, note: 'x' }],
    ['null', null],
    ['array', [true]],
  ];
  it.each(acks)('%s: the same result as the protocol schema', (_name, input) => {
    const expected = EventAckSchema.safeParse(input);
    const actual = parseEventAck(input);
    expect(actual.success).toBe(expected.success);
    expect(actual.data).toEqual(expected.data);
    expect(actual.error?.issues).toEqual(expected.error?.issues);
  });
});
