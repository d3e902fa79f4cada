import { PassThrough } from 'node:stream';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { LIMITS, encodeFrame, type JsonRpcMessage, type Target } from '@host/protocol';
import { definePlugin, resolveManifest } from './define-plugin';
import { PluginSdkError } from './errors';
import type { PartInput } from './parts';
import { RpcConnection } from './stdio/connection';
import { runStdio } from './stdio/runtime';
import { matchCommand } from './testing/command-match';
import { createTestHost } from './testing/test-host';

// Runs the shared protocol vectors (libs/protocol/vectors, format in its
// README) through the SDK's own code paths, reading the files the way an SDK
// in any language would. Kinds and why each runs here or not:
const RUN = {
  framing: 'through the stdio reader (RpcConnection over a stream)',
  normalization: 'through the send path (ctx.messages.to(target).send)',
  rendering: 'through the send path, with the rendered body the test host records',
  'stdio-manifest': 'through the manifest check of definePlugin',
  'http-manifest': 'through the manifest check of definePlugin',
  'message-event': 'through the test host, which validates delivered events (verdict only)',
  'rpc-method': 'host.initialize params through the stdio runtime (verdict only); the rest is skipped below',
  'command-match': 'through the test kit matcher, which must route exactly like the host',
} as const;
const SKIPPED = {
  'event-ack': 'the SDK writes ACKs but never reads one; libs/protocol runs these against the schema the SDK bundles',
  'message-response': 'the SDK writes HTTP responses (checked with the bundled schema before sending) but never reads one',
  'event-routing': "routing is the host's; the test host applies the same subscription rule (rich.spec.ts sends it every new type)",
  'rich-normalization':
    'the send path normalises with @host/messages, which runs these; rich.spec.ts sends images, files and keyboards through ctx.reply',
  'rich-rendering': 'the send path renders with @host/messages, which runs these; rich.spec.ts checks the rendered bodies',
} as const;

const ROOT = join(__dirname, '../../protocol/vectors');
interface Case {
  name: string;
  [field: string]: unknown;
}
interface VectorFile {
  file: string;
  kind: string;
  cases: Case[];
}

function load(dir = ROOT): VectorFile[] {
  const out: VectorFile[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...load(path));
    else if (entry.name.endsWith('.json')) {
      const data = JSON.parse(readFileSync(path, 'utf8')) as { kind: string; cases: Case[] };
      out.push({ file: relative(ROOT, path), kind: data.kind, cases: data.cases });
    }
  }
  return out;
}

const files = load();
const casesOf = (kind: string) => files.filter((f) => f.kind === kind).flatMap((f) => f.cases);

describe('vector files', () => {
  it('have only kinds this runner knows (a new kind must be run or skipped on purpose)', () => {
    const known = new Set([...Object.keys(RUN), ...Object.keys(SKIPPED)]);
    expect(files.filter((f) => !known.has(f.kind)).map((f) => `${f.file}: ${f.kind}`)).toEqual([]);
    for (const kind of Object.keys(RUN)) expect({ kind, cases: casesOf(kind).length > 0 }).toEqual({ kind, cases: true });
  });
});

type Chunk = string | { hex: string } | { repeat: string; times: number };
function bytes(chunk: Chunk): Buffer {
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  if ('hex' in chunk) return Buffer.from(chunk.hex, 'hex');
  return Buffer.from(chunk.repeat.repeat(chunk.times), 'utf8');
}

describe('framing vectors', () => {
  it.each(casesOf('framing').map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const input = new PassThrough();
    const got: unknown[] = [];
    const closed = new Promise<void>((resolve) => {
      new RpcConnection(
        input,
        () => undefined,
        { maxHeaderBytes: LIMITS.maxHeaderBytes, maxPayloadBytes: LIMITS.maxPayloadBytes },
        {
          onRequest: () => undefined,
          onMessage: (message: JsonRpcMessage) => void got.push({ message }),
          onClose: (error) => {
            if (error) got.push({ error: error.code });
            resolve();
          },
        },
      );
    });
    // One read per chunk, as the vectors require.
    for (const chunk of c['chunks'] as Chunk[]) {
      input.write(bytes(chunk));
      await new Promise((r) => setImmediate(r));
    }
    input.end();
    await closed;
    expect(got).toEqual(c['expect']);
  });
});

/** Sends one vector message through the public API and reports the body or the error code. */
async function sendThroughSdk(
  message: { format?: unknown; parts?: unknown },
  target: unknown,
): Promise<{ body?: unknown; normalized?: unknown; error?: string }> {
  let outcome: { error?: string } = {};
  const plugin = definePlugin({
    manifest: {
      pluginId: 'com.example.vectors',
      name: 'Vectors',
      version: '1.0.0',
      author: 'Tests',
      protocolVersion: 2,
      permissions: ['messages.reply', 'messages.send', 'messages.mentionEveryone'],
    },
    async onMessage(ctx) {
      const to = ctx.messages.to(target as Target);
      const parts = message.parts as PartInput[];
      try {
        await (message.format === 'markdown' ? to.sendMarkdown(...parts) : to.send(...parts));
      } catch (error) {
        outcome = { error: (error as { code?: string }).code ?? String(error) };
      }
    },
  });
  const { replies } = await createTestHost(plugin).send('vector');
  const sent = replies[0];
  return sent ? { body: sent.body, normalized: { format: sent.format, parts: sent.parts } } : outcome;
}

/**
 * Messages the SDK's API cannot produce: it builds the message object itself
 * from (format, ...parts), and a string argument is a text part on purpose
 * (`ctx.reply('hi')`), so a bare string on the wire cannot come from it.
 */
function expressible(message: unknown): boolean {
  if (typeof message !== 'object' || message === null || !Array.isArray((message as { parts?: unknown }).parts)) return false;
  const m = message as Record<string, unknown>;
  if ((m['parts'] as unknown[]).some((p) => typeof p === 'string')) return false;
  return (
    Object.keys(m).every((k) => k === 'format' || k === 'parts') &&
    (m['format'] === undefined || m['format'] === 'text' || m['format'] === 'markdown')
  );
}

describe('normalization vectors', () => {
  const cases = casesOf('normalization');
  it.each(cases.filter((c) => expressible(c['message'])).map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const expected = c['expect'] as { normalized?: unknown; error?: string };
    // QQ shows an everyone mention only in a guild channel (v2.md 7.3), so such a message goes to one.
    const everyone = JSON.stringify(c['message']).includes('"target":"everyone"');
    const got = await sendThroughSdk(
      c['message'] as object,
      everyone ? { type: 'channel', id: 'vector-channel' } : { type: 'group', id: 'vector-group' },
    );
    expect(expected.error !== undefined ? { error: got.error } : { normalized: got.normalized }).toEqual(expected);
  });

  it('skips only messages the API cannot express', () => {
    expect(cases.filter((c) => !expressible(c['message'])).map((c) => c.name)).toEqual([
      'missing parts array is empty',
      'part that is not an object is unsupported',
      'unknown format is unsupported',
      'unknown message field is unsupported',
    ]);
  });
});

describe('rendering vectors', () => {
  const cases = casesOf('rendering');
  it.each(cases.filter((c) => expressible(c['message'])).map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    expect(c['provider']).toBe('qqbot');
    const expected = c['expect'] as { body?: unknown; error?: string };
    const got = await sendThroughSdk(c['message'] as object, c['target']);
    expect(expected.error !== undefined ? { error: got.error } : { body: got.body }).toEqual(expected);
  });

  it('runs every case', () => {
    expect(cases.filter((c) => !expressible(c['message'])).map((c) => c.name)).toEqual([]);
  });
});

describe.each(['stdio-manifest', 'http-manifest'] as const)('%s vectors', (kind) => {
  it.each(casesOf(kind).map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const expected = c['expect'] as { valid?: true; output?: unknown; errors?: { code: string; path: string }[] };
    let issues: { code: string; path: string }[] = [];
    let value: unknown;
    try {
      value = resolveManifest(c['input'], kind === 'stdio-manifest' ? 'stdio' : 'http');
    } catch (error) {
      if (!(error instanceof PluginSdkError)) throw error;
      issues = error.issues.map(({ code, path }) => ({ code, path }));
    }
    const sort = (list: { code: string; path: string }[]) =>
      [...list].sort((a, b) => `${a.path} ${a.code}`.localeCompare(`${b.path} ${b.code}`));
    if (expected.errors) expect(sort(issues)).toEqual(sort(expected.errors));
    else {
      expect(issues).toEqual([]);
      if (expected.output !== undefined) expect(value).toMatchObject(expected.output as object);
    }
  });
});

describe('message-event vectors', () => {
  const plugin = definePlugin({ pluginId: 'com.example.vectors', onMessage: () => undefined });
  it.each(casesOf('message-event').map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const valid = (c['expect'] as { valid: boolean }).valid;
    const outcome = await createTestHost(plugin)
      .deliver(c['input'] as never)
      .then(
        () => true,
        () => false,
      );
    expect(outcome).toBe(valid);
  });
});

describe('rpc-method vectors: host.initialize params through the stdio runtime', () => {
  const plugin = definePlugin({ pluginId: 'com.example.echo', onMessage: () => undefined });
  const cases = casesOf('rpc-method').filter((c) => c['method'] === 'host.initialize' && c['part'] === 'params');
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const exits: number[] = [];
    const done = runStdio(plugin, {
      argv: ['node', 'plugin', '--host-stdio'],
      stdin,
      stdout,
      stderr: new PassThrough(),
      exit: (code) => void exits.push(code),
    });
    const answer = new Promise<Record<string, unknown>>((resolve) => {
      let text = '';
      stdout.on('data', (b: Buffer) => {
        text += b.toString('utf8');
        const body = text.split('\r\n\r\n')[1];
        if (body && body.length >= Number(/Content-Length: (\d+)/.exec(text)?.[1])) resolve(JSON.parse(body));
      });
    });
    const input = c['input'] as Record<string, unknown>;
    // The runtime also checks the id against its own; the vectors use com.example.echo.
    stdin.write(encodeFrame({ jsonrpc: '2.0', id: 1, method: 'host.initialize', params: input }));
    const response = await answer;
    stdin.end();
    await done;
    const valid = (c['expect'] as { valid: boolean }).valid;
    const idMatches = typeof input === 'object' && input !== null && input['pluginId'] === 'com.example.echo';
    expect('result' in response).toBe(valid && idMatches);
    if (!valid) expect(response['error']).toMatchObject({ code: -32602 });
  });

  it('has cases to run', () => {
    expect(cases.length).toBeGreaterThan(1);
  });
});

describe('command-match vectors (the test kit routes like the host)', () => {
  it.each(casesOf('command-match').map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const found = matchCommand(
      c['text'] as string,
      c['commands'] as Parameters<typeof matchCommand>[1],
      c['conversation'] as Parameters<typeof matchCommand>[2],
    );
    const expected = c['expect'] as { index: number; [k: string]: unknown } | null;
    if (expected === null) expect(found).toBeUndefined();
    else {
      const { index: _index, ...match } = expected;
      expect(found).toEqual(match);
    }
  });
});
