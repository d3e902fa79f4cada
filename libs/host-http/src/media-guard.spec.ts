import type { OutboundRequest, OutboundSink } from '@host/host-core';
import type { SendResult } from '@host/protocol';
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

  it('lists media URLs in order', () => {
    expect(
      mediaUrls([
        { type: 'image', url: 'https://a/1' },
        { type: 'composite', parts: [{ type: 'file', url: 'https://a/2' }] },
      ]),
    ).toEqual(['https://a/1', 'https://a/2']);
  });
});
