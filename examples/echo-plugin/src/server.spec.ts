import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { join } from 'node:path';

// Runs the built HTTP entry (dist/server.js) as a real service and sends it a
// signed event, as the host would.
const SECRET = 'test-secret-for-the-echo-example';
let child: ChildProcess;
let base: string;

beforeAll(async () => {
  child = spawn(process.execPath, [join(__dirname, '..', 'dist', 'server.js')], {
    env: { ...process.env, HOST_PLUGIN_SECRET: SECRET, PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  base = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
});

afterAll(async () => {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
});

function signed(body: string): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const deliveryId = randomUUID();
  const mac = createHmac('sha256', SECRET).update(`${timestamp}.${deliveryId}.${body}`).digest('hex');
  return {
    'content-type': 'application/json',
    'x-host-timestamp': timestamp,
    'x-host-delivery-id': deliveryId,
    'x-host-signature': `v1=${mac}`,
  };
}

describe('echo plugin over HTTP', () => {
  it('serves its manifest with the HTTP capabilities', async () => {
    const manifest = await (await fetch(`${base}/host/plugin/manifest`)).json();
    expect(manifest).toMatchObject({ pluginId: 'com.example.echo', protocolVersion: 2, capabilities: 9 });
  });

  it('answers a signed /echo with a Markdown reply mentioning the sender', async () => {
    const body = JSON.stringify({
      eventId: 'evt-1',
      eventType: 'message.created',
      timestamp: new Date().toISOString(),
      source: 'qqbot',
      bot: { botAccountId: 'bot', platform: 'qqbot' },
      conversation: { type: 'group', conversationId: 'group-1' },
      sender: { provider: 'qqbot', mentionId: 'user-1', displayName: 'Ann' },
      message: { id: 'm1', content: '/echo hello', attachments: [], mentions: [] },
      messageReference: { messageId: 'm1', targetType: 'group', targetId: 'group-1', restrictions: [] },
      command: { name: 'echo', word: 'echo', prefix: '/', args: 'hello' },
    });
    const res = await fetch(`${base}/host/plugin/events/message`, { method: 'POST', headers: signed(body), body });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      accepted: true,
      intercepted: false,
      outboundMessages: [
        {
          format: 'markdown',
          parts: [
            { type: 'mention', target: 'user', id: 'user-1', displayName: 'Ann' },
            { type: 'text', text: ' said: **' },
            { type: 'text', text: 'hello', literal: true },
            { type: 'text', text: '**' },
          ],
        },
      ],
      error: null,
    });
  });

  it('refuses an unsigned event', async () => {
    const res = await fetch(`${base}/host/plugin/events/message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(401);
  });
});
