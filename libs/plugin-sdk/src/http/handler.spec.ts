import { createHmac, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { MessageResponseSchema, RELEASE_VERSIONS, type MessageEventInput } from '@host/protocol';
import { echoManifest } from '../manifests.spec-helper';
import { definePlugin } from '../define-plugin';
import { HandlerError } from '../errors';
import { createHttpHandler, httpRouter, secretFromFile } from './index';

const SECRET = 'kR3d9Zq0bV7xN2mW5tY8uA1sD4fG6hJ9kL0pO3iU7yE';

/** Signs as docs/protocol/http-signing.md says, independently of the SDK's own code. */
function sign(body: string, { secret = SECRET, timestamp = Math.floor(Date.now() / 1000), deliveryId = randomUUID() } = {}) {
  const mac = createHmac('sha256', secret).update(`${timestamp}.${deliveryId}.${body}`).digest('hex');
  return {
    'x-host-timestamp': String(timestamp),
    'x-host-delivery-id': deliveryId,
    'x-host-signature': `v1=${mac}`,
    'x-host-protocol-version': '2',
    'content-type': 'application/json',
  };
}

function event(over: Partial<MessageEventInput> = {}): MessageEventInput {
  return {
    eventId: `evt-${randomUUID()}`,
    eventType: 'message.created',
    timestamp: new Date().toISOString(),
    source: 'qqbot',
    bot: { botAccountId: 'bot-1', platform: 'qqbot' },
    conversation: { type: 'group', conversationId: 'grp-1' },
    sender: { provider: 'qqbot', mentionId: 'user-1', displayName: 'Ann' },
    message: { id: 'm-1', content: '/echo hello', attachments: [], mentions: [] },
    messageReference: { messageId: 'm-1', targetType: 'group', targetId: 'grp-1', restrictions: [] },
    command: { name: 'echo', word: 'echo', prefix: '/', args: 'hello' },
    ...over,
  };
}

const plugin = definePlugin({
  manifest: { ...echoManifest, permissions: ['messages.reply', 'messages.send', 'messages.intercept'] },
  intercepts: true,
  commands: {
    async echo(ctx) {
      if (ctx.args === 'fail') throw new HandlerError('echo.failed', 'asked to fail');
      if (ctx.args === 'many') {
        for (let i = 0; i < 21; i++) await ctx.reply(`#${i}`);
      }
      if (ctx.args === 'slow') await new Promise((r) => setTimeout(r, 300));
      if (ctx.args === 'pass') {
        ctx.pass();
        await new Promise((r) => setTimeout(r, 50));
        await ctx.reply('after the decision');
        return;
      }
      await ctx.replyMarkdown(ctx.at.user(ctx.sender), ' said ', ctx.args);
      await ctx.messages.group('grp-2').send('copy');
      ctx.intercept();
    },
  },
});

const logs: string[] = [];
const quiet = { log: (level: string, message: string) => void logs.push(`${level}: ${message}`) };

const servers: Server[] = [];
async function serve(listener: RequestListener): Promise<string> {
  const server = createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

async function post(base: string, body: string, headers: Record<string, string>, path = '/host/plugin/events/message') {
  const res = await fetch(base + path, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('createHttpHandler over real HTTP', () => {
  let base: string;
  beforeAll(async () => {
    base = await serve(createHttpHandler(plugin, { secret: SECRET, maxBodyBytes: 64 * 1024, ...quiet }));
  });

  it('serves the HTTP manifest unsigned, with computed capabilities', async () => {
    const res = await fetch(`${base}/host/plugin/manifest`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      pluginId: 'com.example.echo',
      protocolVersion: 2,
      capabilities: 15,
      sdkVersion: RELEASE_VERSIONS.sdkVersion,
    });
  });

  it('answers a signed event with replies (no target) and sends (with target) as outboundMessages', async () => {
    const body = JSON.stringify(event());
    const res = await post(base, body, sign(body));
    expect(res.status).toBe(200);
    expect(MessageResponseSchema.parse(res.body)).toEqual({
      accepted: true,
      intercepted: true,
      outboundMessages: [
        {
          format: 'markdown',
          parts: [
            { type: 'mention', target: 'user', id: 'user-1', displayName: 'Ann' },
            { type: 'text', text: ' said hello' },
          ],
        },
        { target: { type: 'group', id: 'grp-2', botAccountId: 'bot-1' }, format: 'text', parts: [{ type: 'text', text: 'copy' }] },
      ],
      error: null,
    });
  });

  it('answers once the handler ended, with intercepted: false after ctx.pass() and the replies made after it', async () => {
    const body = JSON.stringify(event({ command: { name: 'echo', word: 'echo', prefix: '/', args: 'pass' } }));
    const res = await post(base, body, sign(body));
    expect(res).toEqual({
      status: 200,
      body: {
        accepted: true,
        intercepted: false,
        outboundMessages: [{ format: 'text', parts: [{ type: 'text', text: 'after the decision' }] }],
        error: null,
      },
    });
  });

  it('answers 200 with the error when the handler fails', async () => {
    const body = JSON.stringify(event({ command: { name: 'echo', word: 'echo', prefix: '/', args: 'fail' } }));
    const res = await post(base, body, sign(body));
    expect(res).toEqual({
      status: 200,
      body: { accepted: false, intercepted: false, outboundMessages: [], error: { code: 'echo.failed', message: 'asked to fail' } },
    });
    expect(logs).toContainEqual(expect.stringMatching(/^error: handler for command "echo" .* failed: asked to fail/));
  });

  it('stops a handler at 20 outbound messages with SDK_OUTBOUND_LIMIT', async () => {
    const body = JSON.stringify(event({ command: { name: 'echo', word: 'echo', prefix: '/', args: 'many' } }));
    const res = await post(base, body, sign(body));
    expect(res.body).toMatchObject({ accepted: false, error: { code: 'SDK_OUTBOUND_LIMIT' } });
    expect(res.body['outboundMessages']).toHaveLength(20);
  });

  it('refuses a wrong secret with 401 signature.invalid', async () => {
    const body = JSON.stringify(event());
    expect(await post(base, body, sign(body, { secret: 'not-the-secret' }))).toEqual({
      status: 401,
      body: { error: { code: 'signature.invalid', message: expect.stringMatching(/signing secret/) } },
    });
  });

  it('refuses a body changed after signing', async () => {
    const body = JSON.stringify(event());
    const res = await post(base, body.replace('hello', 'HELLO'), sign(body));
    expect([res.status, (res.body['error'] as { code: string }).code]).toEqual([401, 'signature.invalid']);
  });

  it('refuses a stale timestamp with 401 signature.expired', async () => {
    const body = JSON.stringify(event());
    const res = await post(base, body, sign(body, { timestamp: Math.floor(Date.now() / 1000) - 301 }));
    expect(res.status).toBe(401);
    expect(res.body['error']).toMatchObject({ code: 'signature.expired', message: expect.stringMatching(/NTP/) });
  });

  it('refuses a replayed delivery id with 401 signature.replayed', async () => {
    const body = JSON.stringify(event());
    const headers = sign(body);
    expect((await post(base, body, headers)).status).toBe(200);
    const again = await post(base, body, headers);
    expect([again.status, (again.body['error'] as { code: string }).code]).toEqual([401, 'signature.replayed']);
  });

  it('refuses unsigned requests with 401 signature.missing', async () => {
    const res = await post(base, '{}', { 'content-type': 'application/json' });
    expect([res.status, (res.body['error'] as { code: string }).code]).toEqual([401, 'signature.missing']);
  });

  it('answers 400 for a signed body that is not a message event, naming the fields', async () => {
    const body = JSON.stringify({ ...event(), eventType: 'message.deleted' });
    const res = await post(base, body, sign(body));
    expect(res.status).toBe(400);
    expect(res.body['error']).toMatchObject({
      code: 'event.invalid',
      details: { issues: [{ code: 'event.field.invalid', path: 'eventType' }] },
    });
    expect(res.body['error']).not.toHaveProperty('issues');
  });

  it('answers 400 when the host addresses another plugin id', async () => {
    const body = JSON.stringify(event());
    const res = await post(base, body, { ...sign(body), 'x-host-plugin-id': 'com.example.other' });
    expect([res.status, (res.body['error'] as { code: string }).code]).toEqual([400, 'plugin.id_mismatch']);
  });

  it('answers 413 for a body over the limit, 405 for a wrong method and 404 elsewhere', async () => {
    const big = 'x'.repeat(65 * 1024);
    expect((await post(base, big, sign(big))).status).toBe(413);
    const get = await fetch(`${base}/host/plugin/events/message`);
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
    expect((await fetch(`${base}/other`)).status).toBe(404);
  });
});

describe('HTTP options', () => {
  it('accepts either secret during a rotation', async () => {
    const base = await serve(createHttpHandler(plugin, { secret: ['new-secret', SECRET], ...quiet }));
    for (const secret of ['new-secret', SECRET]) {
      const body = JSON.stringify(event());
      expect((await post(base, body, sign(body, { secret }))).status).toBe(200);
    }
  });

  it('answers 503 when busy without recording the delivery, so the host retry succeeds', async () => {
    const base = await serve(createHttpHandler(plugin, { secret: SECRET, maxConcurrentEvents: 1, ...quiet }));
    const slow = JSON.stringify(event({ command: { name: 'echo', word: 'echo', prefix: '/', args: 'slow' } }));
    const first = post(base, slow, sign(slow));
    await new Promise((r) => setTimeout(r, 100));
    const body = JSON.stringify(event());
    const headers = sign(body);
    const busy = await post(base, body, headers);
    expect(busy.status).toBe(503);
    expect((await first).status).toBe(200);
    expect((await post(base, body, headers)).status).toBe(200);
  });

  it('can require signed manifest requests', async () => {
    const base = await serve(createHttpHandler(plugin, { secret: SECRET, verifyManifestRequests: true }));
    expect((await fetch(`${base}/host/plugin/manifest`)).status).toBe(401);
    expect((await fetch(`${base}/host/plugin/manifest`, { headers: sign('') })).status).toBe(200);
  });

  it('takes the secret when it becomes known: 401 signature.secret_unset until then, the manifest served meanwhile', async () => {
    let secret: string | undefined = undefined;
    const base = await serve(createHttpHandler(plugin, { secret: () => secret, ...quiet }));
    expect((await fetch(`${base}/host/plugin/manifest`)).status).toBe(200);
    const body = JSON.stringify(event());
    const refused = await post(base, body, sign(body));
    expect([refused.status, (refused.body['error'] as { code: string }).code]).toEqual([401, 'signature.secret_unset']);
    secret = SECRET;
    const again = JSON.stringify(event());
    expect((await post(base, again, sign(again))).status).toBe(200);
  });

  it('reads the secret from a file, again when the file changes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sdk-secret-'));
    try {
      const file = join(dir, 'secret');
      const base = await serve(createHttpHandler(plugin, { secret: secretFromFile(file), ...quiet }));
      const body = JSON.stringify(event());
      expect((await post(base, body, sign(body))).status).toBe(401);
      writeFileSync(file, `${SECRET}\n`);
      const second = JSON.stringify(event());
      expect((await post(base, second, sign(second))).status).toBe(200);
      // A rotation: the new secret on its own line beside the old one, then the old one gone.
      writeFileSync(file, `new-secret-0123456789\n${SECRET}\n`);
      const third = JSON.stringify(event());
      expect((await post(base, third, sign(third, { secret: 'new-secret-0123456789' }))).status).toBe(200);
      writeFileSync(file, 'new-secret-0123456789\n');
      const fourth = JSON.stringify(event());
      expect((await post(base, fourth, sign(fourth))).status).toBe(401);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("gives handlers a data folder laid out like a stdio plugin's", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sdk-data-'));
    try {
      let seen: unknown;
      const withFiles = definePlugin({ manifest: echoManifest, commands: { echo: (ctx) => void (seen = ctx.directories) } });
      const base = await serve(createHttpHandler(withFiles, { secret: SECRET, dataDirectory: dir, ...quiet }));
      const body = JSON.stringify(event());
      expect((await post(base, body, sign(body))).status).toBe(200);
      expect(seen).toMatchObject({
        pluginDataDirectory: dir,
        pluginConfigDirectory: join(dir, 'config'),
        pluginCacheDirectory: join(dir, 'cache'),
      });
      expect(existsSync(join(dir, 'config'))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses to start without a secret or with a pluginId-only definition', () => {
    expect(() => createHttpHandler(plugin, { secret: '' })).toThrow(/SDK_HTTP_CONFIG_INVALID/);
    expect(() => createHttpHandler(definePlugin({ pluginId: 'com.example.x', onMessage: () => undefined }), { secret: 's' })).toThrow(
      /pass "manifest"/,
    );
  });

  it('runs onStart before the first event and onStop on close', async () => {
    const calls: string[] = [];
    const p = definePlugin({
      manifest: { ...echoManifest, commands: [] },
      onStart: async (ctx) => {
        await new Promise((r) => setTimeout(r, 50));
        calls.push(`start:${ctx.settings['greeting']}`);
      },
      onMessage: () => void calls.push('event'),
      onStop: () => void calls.push('stop'),
    });
    const handler = createHttpHandler(p, { secret: SECRET, settings: { greeting: 'hi' } });
    const base = await serve(handler);
    const body = JSON.stringify(event({ command: undefined }));
    expect((await post(base, body, sign(body))).status).toBe(200);
    await handler.close();
    expect(calls).toEqual(['start:hi', 'event', 'stop']);
  });
});

describe('httpRouter with Express', () => {
  it('serves the plugin under a mount path and passes other routes on', async () => {
    const app = express();
    app.use('/bot', httpRouter(plugin, { secret: SECRET, ...quiet }));
    app.use(express.json());
    app.post('/other', (req, res) => void res.json({ got: req.body }));
    const base = await serve(app);
    const body = JSON.stringify(event());
    expect((await post(base, body, sign(body), '/bot/host/plugin/events/message')).body).toMatchObject({ accepted: true });
    expect((await fetch(`${base}/bot/host/plugin/manifest`)).status).toBe(200);
    expect((await post(base, '{"a":1}', { 'content-type': 'application/json' }, '/other')).body).toEqual({ got: { a: 1 } });
  });

  it('uses the Buffer body of express.raw()', async () => {
    const app = express();
    app.use(express.raw({ type: 'application/json' }));
    app.use(httpRouter(plugin, { secret: SECRET, ...quiet }));
    const base = await serve(app);
    const body = JSON.stringify(event());
    expect((await post(base, body, sign(body))).status).toBe(200);
  });

  it('explains a JSON body parser mounted before it', async () => {
    const app = express();
    app.use(express.json());
    app.use(httpRouter(plugin, { secret: SECRET, ...quiet }));
    const base = await serve(app);
    const body = JSON.stringify(event());
    const res = await post(base, body, sign(body));
    expect(res.status).toBe(500);
    expect(res.body['error']).toMatchObject({ code: 'http.body_consumed', message: expect.stringMatching(/before express.json\(\)/) });
  });
});
