import type { OutboundRequest, OutboundSink } from '@host/host-core';
import type { SendResult } from '@host/protocol';
import { FileMediaStore } from '@host/host-store';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MediaGuard, mediaUrls } from './media-guard';

const strict = { allowLoopback: false, allowPrivate: false };

function recordingSink(): OutboundSink & { sent: OutboundRequest[] } {
  const sent: OutboundRequest[] = [];
  return {
    sent,
    send: async (r) => {
      sent.push(r);
      return { accepted: true, target: { type: 'group', id: 'G' } } as SendResult;
    },
  };
}

const withImage = (url: string, pluginId = 'com.example.pics'): OutboundRequest => ({
  pluginId,
  kind: 'reply',
  eventId: 'e1',
  message: {
    format: 'text',
    parts: [
      { type: 'text', text: 'look' },
      { type: 'image', url },
    ],
  },
});

describe('MediaGuard', () => {
  it('passes a message without media untouched, whatever the policy', async () => {
    const sink = recordingSink();
    const guarded = new MediaGuard({ policy: strict }).wrap(sink);
    await guarded.send({ pluginId: 'p', kind: 'reply', eventId: 'e', message: { format: 'text', parts: [{ type: 'text', text: 'hi' }] } });
    expect(sink.sent).toHaveLength(1);
  });

  it.each([
    ['a private address', 'https://10.1.2.3/a.png'],
    ['loopback', 'http://127.0.0.1:8080/a.png'],
    ['link-local metadata', 'http://169.254.169.254/latest/meta-data'],
    ['IPv6 loopback', 'https://[::1]/a.png'],
  ])('refuses %s with message.media.address_refused and sends nothing', async (_what, url) => {
    const sink = recordingSink();
    const guarded = new MediaGuard({ policy: strict }).wrap(sink);
    await expect(guarded.send(withImage(url))).rejects.toMatchObject({ code: 'message.media.address_refused' });
    expect(sink.sent).toHaveLength(0);
  });

  it('refuses a host name that resolves to a private address', async () => {
    const guard = new MediaGuard({ policy: strict, resolver: async () => [{ address: '192.168.1.10', family: 4 }] });
    await expect(guard.check(withImage('https://cdn.example.com/a.png'))).rejects.toMatchObject({
      code: 'message.media.address_refused',
      details: { hostname: 'cdn.example.com' },
    });
  });

  it('refuses a host name that does not resolve', async () => {
    const guard = new MediaGuard({
      policy: strict,
      resolver: async () => {
        throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
      },
    });
    await expect(guard.check(withImage('https://nowhere.invalid/a.png'))).rejects.toMatchObject({ code: 'message.media.address_refused' });
  });

  it('lets a public address through, and loopback when the policy allows it', async () => {
    await expect(new MediaGuard({ policy: strict }).check(withImage('https://93.184.215.14/a.png'))).resolves.toBeUndefined();
    const lenient = new MediaGuard({ policy: { allowLoopback: true, allowPrivate: false } });
    await expect(lenient.check(withImage('http://127.0.0.1:9/a.png'))).resolves.toBeUndefined();
  });

  it('checks a file inside a composite too', async () => {
    const guard = new MediaGuard({ policy: strict });
    const request: OutboundRequest = {
      pluginId: 'p',
      kind: 'reply',
      eventId: 'e',
      message: { format: 'text', parts: [{ type: 'composite', parts: [{ type: 'file', url: 'https://10.0.0.5/r.pdf' }] }] },
    };
    await expect(guard.check(request)).rejects.toMatchObject({ code: 'message.media.address_refused' });
  });

  it('limits each plugin to its uploads per minute, and forgets them after a minute', async () => {
    let now = 1_000_000;
    const guard = new MediaGuard({ policy: strict, maxPerMinute: 3, now: () => now });
    for (let i = 0; i < 3; i++) await guard.check(withImage('https://93.184.215.14/a.png'));
    await expect(guard.check(withImage('https://93.184.215.14/a.png'))).rejects.toMatchObject({
      code: 'message.media.rate_limited',
      details: { pluginId: 'com.example.pics' },
    });
    // Another plugin has its own budget.
    await expect(guard.check(withImage('https://93.184.215.14/a.png', 'com.example.other'))).resolves.toBeUndefined();
    now += 60_001;
    await expect(guard.check(withImage('https://93.184.215.14/a.png'))).resolves.toBeUndefined();
  });

  describe('uploaded media (mediaId)', () => {
    let dir: string;
    let store: FileMediaStore;
    const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), 'media-guard-'));
      store = await FileMediaStore.open({ dir, sweepEveryMilliseconds: 0 });
    });
    afterEach(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    async function uploaded(pluginId: string, bytes: Buffer, contentType: string): Promise<string> {
      const { uploadId } = await store.begin({ pluginId, contentType, size: bytes.length });
      await store.append(pluginId, uploadId, 0, bytes.toString('base64'));
      return (await store.finish(pluginId, uploadId)).mediaId;
    }
    const withUpload = (type: 'image' | 'file', mediaId: string, pluginId = 'com.example.pics'): OutboundRequest => ({
      pluginId,
      kind: 'reply',
      eventId: 'e1',
      message: { format: 'text', parts: [{ type, mediaId }] },
    });

    it("lets the plugin's own upload through without counting it toward the URL rate", async () => {
      const sink = recordingSink();
      const guarded = new MediaGuard({ policy: strict, maxPerMinute: 1, media: store }).wrap(sink);
      const mediaId = await uploaded('com.example.pics', PNG, 'image/png');
      await guarded.send(withUpload('image', mediaId));
      await guarded.send(withUpload('image', mediaId));
      expect(sink.sent).toHaveLength(2);
    });

    it("refuses another plugin's media id, an unknown one, and a file upload in an image part, sending nothing", async () => {
      const sink = recordingSink();
      const guarded = new MediaGuard({ policy: strict, media: store }).wrap(sink);
      const mine = await uploaded('com.example.pics', PNG, 'image/png');
      const text = await uploaded('com.example.pics', Buffer.from('hello'), 'text/plain');
      await expect(guarded.send(withUpload('image', mine, 'com.example.other'))).rejects.toMatchObject({ code: 'message.media.unknown' });
      await expect(guarded.send(withUpload('file', 'AAAAAAAAAAAAAAAAAAAAAAAA'))).rejects.toMatchObject({ code: 'message.media.unknown' });
      await expect(guarded.send(withUpload('image', text))).rejects.toMatchObject({ code: 'message.media.type_mismatch' });
      await guarded.send(withUpload('file', text));
      expect(sink.sent).toHaveLength(1);
    });

    it('refuses a media id when the host keeps no media', async () => {
      const guarded = new MediaGuard({ policy: strict }).wrap(recordingSink());
      await expect(guarded.send(withUpload('image', 'AAAAAAAAAAAAAAAAAAAAAAAA'))).rejects.toMatchObject({ code: 'message.media.unknown' });
    });
  });

  it('lists media URLs in order', () => {
    expect(
      mediaUrls([
        { type: 'image', url: 'https://a/1' },
        { type: 'composite', parts: [{ type: 'file', url: 'https://a/2' }] },
      ]),
    ).toEqual(['https://a/1', 'https://a/2']);
  });
});
