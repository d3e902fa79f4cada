import { renderMessage } from './index';

const MEDIA_ID = 'media-0123456789abcdef';
const group = { type: 'group' as const, id: 'G1' };

describe('image and file parts that name uploaded bytes (mediaId)', () => {
  it('renders an image with a media id to a msg_type 7 body that names it, for the provider to upload', () => {
    expect(
      renderMessage(
        'qqbot',
        {
          parts: [
            { type: 'text', text: 'chart: ' },
            { type: 'image', mediaId: MEDIA_ID },
          ],
        },
        group,
      ),
    ).toEqual({
      ok: true,
      value: { msg_type: 7, content: 'chart: ', media: { file_type: 1, media_id: MEDIA_ID } },
    });
  });

  it.each([
    ['neither url nor mediaId', { type: 'image' }],
    ['both url and mediaId', { type: 'image', url: 'https://cdn.example.com/a.png', mediaId: MEDIA_ID }],
    ['a malformed media id', { type: 'file', mediaId: '../../etc/passwd' }],
  ])('refuses a part with %s as message.part.unsupported', (_what, part) => {
    const r = renderMessage('qqbot', { parts: [part as never] }, group);
    expect(r.ok ? 'rendered' : r.error.code).toBe('message.part.unsupported');
  });

  it('refuses an uploaded image to a guild channel as it refuses one by URL', () => {
    const r = renderMessage('qqbot', { parts: [{ type: 'image', mediaId: MEDIA_ID }] }, { type: 'channel', id: 'C1' });
    expect(r.ok ? 'rendered' : r.error.code).toBe('message.part.unsupported_target');
  });
});
