import request from 'supertest';
import { createTestHost, waitGone, type TestHost } from './harness';

// A real plugin process, end to end through the console provider: the event
// goes out over stdio, the plugin replies with messages.reply, the host
// renders the reply into the exact QQ Bot request body.
describe('console provider with a real stdio plugin', () => {
  let host: TestHost;
  let pluginId: string;

  beforeAll(async () => {
    host = createTestHost();
    pluginId = host.install({ manifest: { permissions: ['messages.reply'] } });
    await host.runtime.start(pluginId);
  });

  afterAll(async () => {
    await host.close();
  });

  const send = (text: string, type: 'group' | 'c2c' = 'group', waitMs?: number) =>
    request(host.app)
      .post('/api/console/messages')
      .send({
        conversation: { type, id: type === 'group' ? 'group-1' : 'user-9' },
        sender: { id: 'user-42', displayName: 'Ann' },
        text,
        ...(waitMs ? { waitMs } : {}),
      });

  it('answers a group /echo with a Markdown body, a real mention tag and escaped text', async () => {
    const res = await send('/echo <b>hi</b>');
    expect(res.status).toBe(200);
    expect(res.body.completed).toBe(true);
    expect(res.body.deliveries).toEqual([
      {
        pluginId,
        state: 'completed',
        accepted: true,
        intercepted: false,
        error: null,
        completion: { at: expect.any(String), error: null, durationMs: expect.any(Number) },
      },
    ]);
    expect(res.body.outbound).toHaveLength(1);
    const [out] = res.body.outbound;
    expect(out.target).toEqual({ type: 'group', id: 'group-1' });
    expect(out.body).toEqual({
      msg_type: 2,
      markdown: { content: '<qqbot-at-user id="user-42" /> <\u2060b>hi<\u2060/b>' },
      msg_id: expect.stringMatching(/^console-in-/),
      msg_seq: 1,
    });
  });

  it('answers a c2c /echo with a text body', async () => {
    const res = await send('  /ECHO plain & simple', 'c2c');
    expect(res.body.outbound[0].target).toEqual({ type: 'user', id: 'user-9' });
    expect(res.body.outbound[0].body).toMatchObject({ msg_type: 0, content: 'plain & simple', msg_seq: 1 });
  });

  it('refuses Markdown to a c2c target and tells the plugin the code', async () => {
    const res = await send('/echo-md **bold**', 'c2c');
    expect(res.body.outbound).toEqual([]);
    expect(res.body.refused).toEqual([
      { pluginId, target: { type: 'user', id: 'user-9' }, error: expect.objectContaining({ code: 'message.format.unsupported_target' }) },
    ]);
    // The ACK came first; the fixture reports the error it got from messages.reply in events.completed.
    expect(res.body.deliveries[0]).toMatchObject({ state: 'failed', accepted: true, error: null });
    expect(res.body.deliveries[0].completion.error.code).toBe('message.format.unsupported_target');
  });

  it('refuses an @everyone mention without messages.mentionEveryone', async () => {
    const res = await send('/everyone hello');
    expect(res.body.deliveries[0].completion.error).toEqual({
      code: 'message.permission.denied',
      message: expect.stringContaining('permission messages.mentionEveryone'),
    });
  });

  it('answers plugin-to-host errors with the documented JSON-RPC codes', async () => {
    const codes: Record<string, string> = {};
    for (const cmd of ['send group:g1 hi', 'badtoken', 'unknown', 'invalid']) {
      const res = await send(`/${cmd}`);
      codes[cmd.split(' ')[0]!] = res.body.deliveries[0].completion.error.code;
    }
    expect(codes).toEqual({ send: 'message.permission.denied', badtoken: 'rpc.-32002', unknown: 'rpc.-32601', invalid: 'rpc.-32602' });
  });

  it('delivers a message that matches no command to a subscribed plugin as an observer', async () => {
    const res = await send('just chatting');
    expect(res.body.deliveries).toEqual([
      {
        pluginId,
        state: 'completed',
        accepted: true,
        intercepted: false,
        error: null,
        completion: expect.objectContaining({ error: null }),
      },
    ]);
    expect(res.body.outbound).toEqual([]);
  });

  it('writes log.write lines and stderr to the plugin log', async () => {
    await send('/log hello from the plugin');
    const lines = await host.logs.tail(pluginId, 50);
    expect(lines).toContainEqual(expect.objectContaining({ stream: 'log', level: 'info', message: 'hello from the plugin' }));
  });

  it('records the event with its deliveries and outbound messages', async () => {
    const res = await send('/echo recorded');
    const record = host.dispatcher.events.get(res.body.eventId)!;
    expect(record.recipients).toEqual([pluginId]);
    expect(record.deliveries[0]).toMatchObject({
      pluginId,
      done: true,
      state: 'completed',
      command: { name: 'echo', word: 'echo', prefix: '/', args: 'recorded' },
    });
    expect(record.outbound[0]).toMatchObject({ pluginId, kind: 'reply', error: null });
    expect(record.routedAt).not.toBeNull();
    expect(record.completedAt).not.toBeNull();
    // events.completed follows the work, so it is recorded after the reply.
    expect(Date.parse(record.deliveries[0]!.completion!.at)).toBeGreaterThanOrEqual(Date.parse(record.outbound[0]!.at));
  });

  it('leaves no process behind after stop', async () => {
    const pid = host.runtime.status(pluginId)!.pid!;
    const status = await host.runtime.stop(pluginId);
    expect(status).toMatchObject({ state: 'stopped', lastExitCode: 0 });
    expect(await waitGone(pid)).toBe(true);
  });
});
