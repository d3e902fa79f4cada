import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileMediaStore } from '@host/host-store';
import type { AddressInfo } from 'node:net';
import { answeredDelivery, chatEventOf, HostError, type OutboundSink, type PluginEndpoint, type PluginRouting } from '@host/host-core';
import { Dispatcher } from '@host/host-dispatch';
import type { EventType, MessageEvent, OutgoingMessage, SendResult } from '@host/protocol';
import { QqBotAccounts } from './accounts';
import { mapDispatch } from './event-mapping';
import { MediaCache } from './media-cache';
import { QqBotProvider } from './provider';
import { FakeQqPlatform, WebhookSigner } from './testing';
import { QqBotWebhook } from './webhook';

/** A plugin in the test process subscribed to some event types, answering each event it gets with `reply`. */
class Plugin implements PluginEndpoint {
  readonly transport = 'http' as const;
  readonly got: MessageEvent[] = [];
  readonly results: (SendResult | HostError)[] = [];
  constructor(
    private readonly types: EventType[],
    private readonly reply?: (e: MessageEvent) => OutgoingMessage[],
    readonly pluginId = 'com.example.rich',
  ) {}
  routing(): PluginRouting {
    return {
      pluginId: this.pluginId,
      eventSubscriptions: this.types.map((eventType) => ({ eventType })),
      commands: [],
      permissions: ['messages.reply'],
      canIntercept: false,
    };
  }
  isAvailable(): boolean {
    return true;
  }
  deliver(event: MessageEvent, sink: OutboundSink) {
    this.got.push(event);
    const run = async () => {
      for (const message of this.reply?.(event) ?? [])
        await sink.send({ pluginId: this.pluginId, kind: 'reply', eventId: event.eventId, message }).then(
          (r) => void this.results.push(r),
          (e: HostError) => void this.results.push(e),
        );
    };
    return answeredDelivery(
      run().then(() => ({ pluginId: this.pluginId, accepted: true, intercepted: false, error: null, durationMs: 0 })),
    );
  }
}

const BOT = { id: 'qq', appId: '1001', secret: 'secret-of-the-bot', markdown: true };
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000000000500010d0a2db40000000049454e44ae426082',
  'hex',
);

describe('QQ Bot rich messages and events, in process', () => {
  let platform: FakeQqPlatform;
  let accounts: QqBotAccounts;
  let files: Server;
  let filesUrl: string;
  const signer = new WebhookSigner({ secret: BOT.secret, appId: BOT.appId, webhookUrl: 'http://unused.invalid' });

  beforeAll(async () => {
    files = createServer((req, res) => {
      if (req.url === '/cat.png') res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
      else if (req.url === '/notes.txt') res.writeHead(200, { 'content-type': 'text/plain' }).end('not an image');
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await signer.close();
    await new Promise((r) => files.close(r));
  });
  beforeEach(async () => {
    platform = await FakeQqPlatform.start(BOT);
    accounts = new QqBotAccounts();
    await accounts.load([{ ...BOT, apiBaseUrl: platform.apiBaseUrl, tokenUrl: platform.tokenUrl }]);
  });
  afterEach(async () => {
    await accounts.close();
    await platform.close();
  });

  function host(plugins: Plugin[], media = new MediaCache(), uploads?: FileMediaStore) {
    const dispatcher = new Dispatcher({ endpoints: () => plugins });
    dispatcher.providers.register(new QqBotProvider(accounts, { media, ...(uploads ? { uploads } : {}) }));
    const records: Promise<unknown>[] = [];
    const webhook = new QqBotWebhook({
      accounts,
      accept: (e) => {
        const r = dispatcher.dispatch(e).then((rec) => dispatcher.whenCompleted(rec.eventId));
        records.push(r);
        return { accepted: true, durable: Promise.resolve(), routed: r };
      },
      log: () => undefined,
    });
    return async (payload: Record<string, unknown>) => {
      const body = Buffer.from(JSON.stringify(payload));
      expect(await webhook.handle(BOT.id, signer.sign(body.toString()), body)).toEqual({ status: 200, body: { op: 12 } });
      await Promise.all(records);
    };
  }

  const click = (id: string, data = 'vote:yes') => ({
    op: 0,
    id: `INTERACTION_CREATE:${id}`,
    t: 'INTERACTION_CREATE',
    d: {
      id,
      type: 11,
      chat_type: 1,
      scene: 'group',
      timestamp: new Date().toISOString(),
      group_openid: 'GROUP_1',
      group_member_openid: 'MEMBER_1',
      data: { type: 11, resolved: { button_data: data, button_id: 'yes' } },
      version: 1,
    },
  });

  it('turns a button click into interaction.created, acknowledges it, and answers with an uploaded image by event_id', async () => {
    const plugin = new Plugin(['interaction.created'], () => [
      {
        format: 'text',
        parts: [
          { type: 'text', text: 'you voted' },
          { type: 'image', url: `${filesUrl}/cat.png` },
        ],
      },
    ]);
    await host([plugin])(click('i-1'));
    const chat = chatEventOf(plugin.got[0]!);
    expect(chat).toMatchObject({
      eventType: 'interaction.created',
      conversation: { type: 'group', conversationId: 'GROUP_1' },
      sender: { mentionId: 'MEMBER_1' },
      interaction: { id: 'i-1', data: 'vote:yes', buttonId: 'yes' },
      messageReference: { messageId: 'event:i-1', targetType: 'group', targetId: 'GROUP_1' },
    });
    await platform.waitFor(() => platform.interactionAcks.length === 1, 'the acknowledgement');
    expect(platform.interactionAcks[0]).toMatchObject({ interactionId: 'i-1', body: { code: 0 } });
    expect(platform.uploads).toHaveLength(1);
    expect(platform.uploads[0]).toMatchObject({
      path: '/v2/groups/GROUP_1/files',
      body: { file_type: 1, url: `${filesUrl}/cat.png`, srv_send_msg: false },
      fetched: { status: 200, contentType: 'image/png', bytes: PNG.length },
    });
    expect(platform.messages.map((m) => m.body)).toEqual([
      { msg_type: 7, content: 'you voted', media: { file_info: platform.uploads[0]!.fileInfo }, event_id: 'i-1', msg_seq: 1 },
    ]);
    expect(plugin.results).toEqual([expect.objectContaining({ accepted: true })]);
  });

  it('uploads a file once while its file_info is valid, and again after it ran out', async () => {
    let now = 1_000_000;
    const media = new MediaCache({ now: () => now });
    const image = { format: 'text' as const, parts: [{ type: 'image' as const, url: `${filesUrl}/cat.png` }] };
    const plugin = new Plugin(['interaction.created'], () => [image, image]);
    const send = host([plugin], media);
    await send(click('i-2'));
    expect(platform.uploads).toHaveLength(1);
    expect(platform.messages).toHaveLength(2);
    now += 3600_000;
    await send(click('i-3'));
    expect(platform.uploads).toHaveLength(2);
    expect(media.uploads).toBe(2);
  });

  it('refuses what the platform cannot take, with the catalogue codes, and keeps going', async () => {
    const plugin = new Plugin(['interaction.created'], () => [
      { format: 'text', parts: [{ type: 'file', url: `${filesUrl}/notes.txt` }] },
      { format: 'text', parts: [{ type: 'image', url: `${filesUrl}/missing.png` }] },
      { format: 'text', parts: [{ type: 'image', url: `${filesUrl}/notes.txt` }] },
      { format: 'text', parts: [{ type: 'text', text: 'still here' }] },
    ]);
    await host([plugin])(click('i-4'));
    expect(plugin.results.map((r) => (r instanceof Error ? (r as HostError).code : 'sent'))).toEqual([
      'message.part.unsupported_target',
      'message.media.upload_failed',
      'message.media.upload_failed',
      'sent',
    ]);
    expect(platform.messages.map((m) => m.body['content'])).toEqual(['still here']);
  });

  it("sends a plugin's uploaded image as file_data, then msg_type 7 with the file_info, uploading it once", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qq-media-'));
    const uploads = await FileMediaStore.open({ dir, sweepEveryMilliseconds: 0 });
    try {
      const { uploadId } = await uploads.begin({ pluginId: 'com.example.rich', contentType: 'image/png', size: PNG.length });
      await uploads.append('com.example.rich', uploadId, 0, PNG.toString('base64'));
      const { mediaId } = await uploads.finish('com.example.rich', uploadId);
      const image = { format: 'text' as const, parts: [{ type: 'image' as const, mediaId }] };
      const plugin = new Plugin(['interaction.created'], () => [image, image]);
      await host([plugin], new MediaCache(), uploads)(click('i-9'));
      expect(platform.uploads).toHaveLength(1);
      expect(platform.uploads[0]).toMatchObject({
        path: '/v2/groups/GROUP_1/files',
        body: { file_type: 1, file_data: PNG.toString('base64'), srv_send_msg: false },
        fetched: { status: 200, contentType: 'image/png', bytes: PNG.length },
      });
      expect(platform.uploads[0]!.body).not.toHaveProperty('url');
      expect(platform.messages.map((m) => m.body['media'])).toEqual([
        { file_info: platform.uploads[0]!.fileInfo },
        { file_info: platform.uploads[0]!.fileInfo },
      ]);
      expect(platform.messages[0]!.body['msg_type']).toBe(7);
    } finally {
      await uploads.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a media id the host does not keep, and keeps going', async () => {
    const plugin = new Plugin(['interaction.created'], () => [
      { format: 'text', parts: [{ type: 'image', mediaId: 'AAAAAAAAAAAAAAAAAAAAAAAA' }] },
      { format: 'text', parts: [{ type: 'text', text: 'still here' }] },
    ]);
    await host([plugin])(click('i-10'));
    expect(plugin.results.map((r) => (r instanceof Error ? (r as HostError).code : 'sent'))).toEqual(['message.media.unknown', 'sent']);
    expect(platform.uploads).toHaveLength(0);
  });

  it('sends a Markdown reply with its keyboard as QQ buttons', async () => {
    const plugin = new Plugin(['interaction.created'], () => [
      {
        format: 'markdown',
        parts: [{ type: 'text', text: '**Again?**' }],
        keyboard: { rows: [{ buttons: [{ label: 'Yes', style: 'primary', action: 'callback', data: 'again', send: false }] }] },
      },
    ]);
    await host([plugin])(click('i-5'));
    expect(platform.messages[0]!.body).toEqual({
      msg_type: 2,
      markdown: { content: '**Again?**' },
      keyboard: {
        content: {
          rows: [
            {
              buttons: [
                {
                  id: 'r0c0',
                  render_data: { label: 'Yes', visited_label: 'Yes', style: 1 },
                  action: { type: 1, data: 'again', permission: { type: 2 }, unsupport_tips: 'Yes' },
                },
              ],
            },
          ],
        },
      },
      event_id: 'i-5',
      msg_seq: 1,
    });
  });

  it('maps the bot joining and leaving a group, greets by event_id, and refuses a reply to the removal', async () => {
    const greeter = new Plugin(['bot.added', 'bot.removed'], (e) => [
      { format: 'text', parts: [{ type: 'text', text: chatEventOf(e)?.eventType === 'bot.added' ? 'hello all' : 'bye' }] },
    ]);
    const send = host([greeter]);
    const at = Math.floor(Date.now() / 1000);
    await send({
      op: 0,
      id: 'GROUP_ADD_ROBOT:abc',
      t: 'GROUP_ADD_ROBOT',
      d: { group_openid: 'G2', op_member_openid: 'M2', timestamp: at },
    });
    await send({
      op: 0,
      id: 'GROUP_DEL_ROBOT:def',
      t: 'GROUP_DEL_ROBOT',
      d: { group_openid: 'G2', op_member_openid: 'M2', timestamp: at },
    });
    expect(greeter.got.map((e) => chatEventOf(e)?.eventType)).toEqual(['bot.added', 'bot.removed']);
    expect(chatEventOf(greeter.got[1]!)).not.toHaveProperty('messageReference');
    expect(platform.messages.map((m) => m.body)).toEqual([
      { msg_type: 0, content: 'hello all', event_id: 'GROUP_ADD_ROBOT:abc', msg_seq: 1 },
    ]);
    expect((greeter.results[1] as HostError).code).toBe('message.reference.unavailable');
  });

  it('sends the new types only to plugins that subscribe to them', async () => {
    const old = new Plugin(['message.created'], undefined, 'com.example.old');
    const added = new Plugin(['bot.added'], undefined, 'com.example.added');
    const send = host([old, added]);
    await send({ op: 0, id: 'FRIEND_ADD:1', t: 'FRIEND_ADD', d: { openid: 'U9', timestamp: 1 } });
    await send(click('i-6'));
    expect(old.got).toEqual([]);
    expect(added.got.map((e) => chatEventOf(e)?.eventType)).toEqual(['bot.added']);
  });
});

describe('mapDispatch of the other event types', () => {
  const bot = { botAccountId: 'qq', appId: '1001' };
  it.each([
    ['FRIEND_ADD', { openid: 'U1', timestamp: 1699240365 }, 'bot.added', { type: 'c2c', conversationId: 'U1' }, true],
    ['FRIEND_DEL', { openid: 'U1', timestamp: 1699240328 }, 'bot.removed', { type: 'c2c', conversationId: 'U1' }, false],
    ['C2C_MSG_RECEIVE', { openid: 'U1', timestamp: 1699240599 }, 'conversation.opened', { type: 'c2c', conversationId: 'U1' }, true],
    [
      'GROUP_MSG_RECEIVE',
      { group_openid: 'G1', op_member_openid: 'M1', timestamp: 1 },
      'conversation.opened',
      { type: 'group', conversationId: 'G1' },
      true,
    ],
  ] as const)('%s', (t, d, eventType, conversation, answerable) => {
    const mapped = mapDispatch({ t, d, id: `${t}:x` } as never, bot, Date.now());
    expect(mapped.ok).toBe(true);
    const chat = mapped.ok ? chatEventOf(mapped.event) : undefined;
    expect(chat).toMatchObject({ eventType, conversation });
    expect(chat?.messageReference?.messageId).toBe(answerable ? `event:${t}:x` : undefined);
    expect(chat?.timestamp).toBe(new Date(d.timestamp * 1000).toISOString());
  });

  it('says why an interaction without a place cannot be mapped', () => {
    expect(mapDispatch({ t: 'INTERACTION_CREATE', d: { id: 'i', data: { resolved: { button_data: 'x' } } } }, bot, Date.now())).toEqual({
      ok: false,
      reason: 'INTERACTION_CREATE names no group, user or channel it happened in',
    });
  });

  it('types incoming attachments with their size and dimensions', () => {
    const mapped = mapDispatch(
      {
        t: 'C2C_MESSAGE_CREATE',
        d: {
          id: 'm1',
          content: 'look',
          author: { user_openid: 'U1' },
          attachments: [{ content_type: 'image/jpeg', url: 'multimedia.nt.qq.com.cn/x', size: '2048', width: 640, height: 480 }],
        },
      },
      bot,
      Date.now(),
    );
    expect(mapped.ok && mapped.event.message.attachments).toEqual([
      {
        id: 'm1:0',
        contentType: 'image/jpeg',
        kind: 'image',
        url: 'https://multimedia.nt.qq.com.cn/x',
        sizeBytes: 2048,
        width: 640,
        height: 480,
      },
    ]);
  });
});
