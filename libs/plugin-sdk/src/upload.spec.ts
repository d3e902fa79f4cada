import { echoManifest } from './manifests.spec-helper';
import { definePlugin } from './define-plugin';
import { file, image } from './rich';
import { createTestHost } from './testing';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('the rest of a png')]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16]);

/** Uploads what the command's args name and replies with it; a refusal is the reply's text. */
const uploader = (permissions: string[]) =>
  definePlugin({
    manifest: { ...echoManifest, permissions },
    async onMessage(ctx) {
      const [what = ''] = ctx.args.split(' ');
      try {
        if (what === 'file') {
          const notes = await ctx.uploadMedia(Buffer.from('a,b\n1,2\n'), 'text/csv', { fileName: 'notes.csv' });
          await ctx.reply(file.fromMedia(notes));
          return;
        }
        const bytes = what === 'lie' ? JPEG : what === 'huge' ? Buffer.alloc(10 * 1024 * 1024 + 1) : PNG;
        const media = await ctx.uploadMedia(bytes, 'image/png');
        await ctx.reply('here: ', image.fromMedia(media, { alt: 'a pixel' }));
      } catch (error) {
        await ctx.reply(`refused: ${(error as { code?: string }).code}`);
      }
    },
  });

describe('ctx.uploadMedia in the test kit', () => {
  const withPermission = uploader(['messages.reply', 'media.upload']);

  it('uploads the bytes and replies with an image part naming the media id, rendered as the host renders it', async () => {
    const host = createTestHost(withPermission);
    const { replies } = await host.send('/echo pic');
    const [mediaId] = [...host.uploads.keys()];
    expect(host.uploads.get(mediaId!)).toEqual({ bytes: Uint8Array.from(PNG), contentType: 'image/png' });
    expect(replies.map((r) => r.body)).toEqual([{ msg_type: 7, content: 'here: ', media: { file_type: 1, media_id: mediaId } }]);
  });

  it('takes a file under a type it has no signature for, with its name', async () => {
    const host = createTestHost(withPermission);
    await host.send('/echo file');
    expect([...host.uploads.values()]).toEqual([{ bytes: expect.any(Uint8Array), contentType: 'text/csv', fileName: 'notes.csv' }]);
  });

  it.each([
    ['lie', 'message.media.type_mismatch'],
    ['huge', 'message.media.too_large'],
  ])('refuses /%s with %s and keeps nothing', async (what, code) => {
    const host = createTestHost(withPermission);
    const { replies } = await host.send(`/echo ${what}`);
    expect(replies.map((r) => r.content)).toEqual([`refused: ${code}`]);
    expect(host.uploads.size).toBe(0);
  });

  it('refuses an upload without the media.upload permission before anything leaves', async () => {
    const host = createTestHost(uploader(['messages.reply']));
    const { replies } = await host.send('/echo pic');
    expect(replies.map((r) => r.content)).toEqual(['refused: message.permission.denied']);
    expect(host.uploads.size).toBe(0);
  });

  it('builds image and file parts from a media id or an upload', () => {
    const uploaded = { mediaId: 'media-0123456789abcdef', contentType: 'image/png', size: 3, expiresAt: '2026-01-01T00:00:00.000Z' };
    expect(image.fromMedia(uploaded, { alt: 'x' })).toEqual({ type: 'image', mediaId: 'media-0123456789abcdef', alt: 'x' });
    expect(file.fromMedia('media-0123456789abcdef', { fileName: 'a.csv' })).toEqual({
      type: 'file',
      mediaId: 'media-0123456789abcdef',
      fileName: 'a.csv',
    });
  });
});
