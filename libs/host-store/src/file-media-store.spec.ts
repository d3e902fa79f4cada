import { isHostError } from '@host/host-core';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileMediaStore, sniffContentType, type MediaStoreLimits } from './file-media-store';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('rest of a png image')]);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('rest of a jpeg image')]);

let root: string;
let clock: number;
const stores: FileMediaStore[] = [];
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'media-store-'));
  clock = 1_000_000;
});
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  rmSync(root, { recursive: true, force: true });
});

async function open(limits: Partial<MediaStoreLimits> = {}): Promise<FileMediaStore> {
  const store = await FileMediaStore.open({ dir: join(root, 'media'), limits, now: () => clock, sweepEveryMilliseconds: 0 });
  stores.push(store);
  return store;
}

async function codeOf(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    if (isHostError(e)) return e.code;
    throw e;
  }
  throw new Error('expected a refusal');
}

/** Uploads `bytes` in chunks of `chunk` bytes and finishes. */
async function upload(store: FileMediaStore, pluginId: string, bytes: Buffer, contentType: string, chunk = 7) {
  const { uploadId } = await store.begin({ pluginId, contentType, size: bytes.length });
  for (let at = 0; at < bytes.length; at += chunk) {
    await store.append(pluginId, uploadId, at, bytes.subarray(at, at + chunk).toString('base64'));
  }
  return store.finish(pluginId, uploadId);
}

async function readAll(store: FileMediaStore, mediaId: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of store.open(mediaId)) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('FileMediaStore', () => {
  it('writes chunks to a file and gives the bytes back by media id', async () => {
    const store = await open();
    const media = await upload(store, 'p1', PNG, 'image/png');
    expect(media).toMatchObject({ pluginId: 'p1', contentType: 'image/png', size: PNG.length, expiresAt: clock + 60 * 60_000 });
    expect(media.mediaId).toMatch(/^[A-Za-z0-9_-]{16,64}$/);
    expect(await readAll(store, media.mediaId)).toEqual(PNG);
    expect(store.usedBytes).toBe(PNG.length);
  });

  it('empties its directory when it opens: ids do not outlive the host', async () => {
    const dir = join(root, 'media');
    const first = await open();
    await upload(first, 'p1', PNG, 'image/png');
    await first.close();
    writeFileSync(join(dir, 'left-over'), 'x');
    await open();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses an upload that declares more than the size limit, and a chunk beyond the declared size', async () => {
    const store = await open({ maxUploadBytes: 100 });
    expect(await codeOf(store.begin({ pluginId: 'p1', contentType: 'image/png', size: 101 }))).toBe('message.media.too_large');
    const { uploadId } = await store.begin({ pluginId: 'p1', contentType: 'application/octet-stream', size: 4 });
    expect(await codeOf(store.append('p1', uploadId, 0, Buffer.from('12345').toString('base64')))).toBe('message.media.too_large');
    // The refused chunk drops the upload and gives its reservation back.
    expect(await codeOf(store.finish('p1', uploadId))).toBe('message.media.unknown');
    expect(store.usedBytes).toBe(0);
  });

  it('refuses a chunk larger than the chunk limit before decoding it', async () => {
    const store = await open({ maxChunkBytes: 8 });
    const { uploadId } = await store.begin({ pluginId: 'p1', contentType: 'application/octet-stream', size: 50 });
    expect(await codeOf(store.append('p1', uploadId, 0, Buffer.alloc(9).toString('base64')))).toBe('message.media.too_large');
  });

  it('refuses bytes whose signature lies about the declared image type, and unknown image types', async () => {
    const store = await open();
    expect(await codeOf(upload(store, 'p1', JPEG, 'image/png'))).toBe('message.media.type_mismatch');
    expect(await codeOf(upload(store, 'p1', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'image/png'))).toBe(
      'message.media.type_mismatch',
    );
    expect(await codeOf(store.begin({ pluginId: 'p1', contentType: 'image/svg+xml', size: 10 }))).toBe('message.media.type_mismatch');
    expect(await codeOf(upload(store, 'p1', Buffer.from('plain text'), 'application/pdf'))).toBe('message.media.type_mismatch');
    // The refused uploads left nothing behind.
    expect(store.usedBytes).toBe(0);
    await new Promise((r) => setTimeout(r, 20));
    expect(readdirSync(join(root, 'media'))).toEqual([]);
    // Declared types the store has no signature for are taken as declared.
    expect((await upload(store, 'p1', Buffer.from('a,b\n1,2\n'), 'text/csv')).contentType).toBe('text/csv');
    expect((await upload(store, 'p1', JPEG, 'image/jpeg')).contentType).toBe('image/jpeg');
  });

  it('tells each image format from its first bytes', () => {
    expect(sniffContentType(PNG)).toBe('image/png');
    expect(sniffContentType(JPEG)).toBe('image/jpeg');
    expect(sniffContentType(Buffer.from('GIF89a....'))).toBe('image/gif');
    expect(sniffContentType(Buffer.from('RIFF\x10\x00\x00\x00WEBPVP8 ', 'latin1'))).toBe('image/webp');
    expect(sniffContentType(Buffer.from('RIFF\x10\x00\x00\x00WAVEfmt ', 'latin1'))).toBeUndefined();
  });

  it('refuses chunks out of order, bad base64, an empty chunk and an early finish', async () => {
    const store = await open();
    const begin = () => store.begin({ pluginId: 'p1', contentType: 'application/octet-stream', size: 10 });
    let { uploadId } = await begin();
    expect(await codeOf(store.append('p1', uploadId, 3, 'AAAA'))).toBe('message.media.upload_invalid');
    ({ uploadId } = await begin());
    expect(await codeOf(store.append('p1', uploadId, 0, 'not base64!'))).toBe('message.media.upload_invalid');
    ({ uploadId } = await begin());
    expect(await codeOf(store.append('p1', uploadId, 0, ''))).toBe('message.media.upload_invalid');
    ({ uploadId } = await begin());
    await store.append('p1', uploadId, 0, 'AAAA');
    expect(await codeOf(store.finish('p1', uploadId))).toBe('message.media.upload_invalid');
    expect(store.usedBytes).toBe(0);
  });

  it('refuses a second chunk while the first is being written, and keeps the upload', async () => {
    const store = await open();
    const { uploadId } = await store.begin({ pluginId: 'p1', contentType: 'application/octet-stream', size: 6 });
    const first = store.append('p1', uploadId, 0, 'AAAA');
    expect(await codeOf(store.append('p1', uploadId, 3, 'AAAA'))).toBe('message.media.upload_invalid');
    await first;
    await store.append('p1', uploadId, 3, 'AAAA');
    expect((await store.finish('p1', uploadId)).size).toBe(6);
  });

  it('counts uploads per plugin and minute', async () => {
    const store = await open({ uploadsPerMinute: 2 });
    const begin = (pluginId: string) => store.begin({ pluginId, contentType: 'text/plain', size: 1 });
    await begin('p1');
    await begin('p1');
    expect(await codeOf(begin('p1'))).toBe('message.media.rate_limited');
    await begin('p2');
    clock += 60_001;
    await begin('p1');
  });

  it('refuses an upload that would pass the total bytes kept, counting uploads under way by their declared size', async () => {
    const store = await open({ maxStoreBytes: 30 });
    await upload(store, 'p1', PNG.subarray(0, 20), 'application/octet-stream');
    await store.begin({ pluginId: 'p2', contentType: 'text/plain', size: 10 });
    expect(await codeOf(store.begin({ pluginId: 'p3', contentType: 'text/plain', size: 1 }))).toBe('message.media.store_full');
    // Space comes back when media expire.
    clock += 60 * 60_000;
    store.sweep();
    await store.begin({ pluginId: 'p3', contentType: 'text/plain', size: 1 });
  });

  it('shows a plugin only its own media ids', async () => {
    const store = await open();
    const media = await upload(store, 'p1', PNG, 'image/png');
    expect(store.get(media.mediaId, 'p1').mediaId).toBe(media.mediaId);
    expect(await codeOf(() => store.get(media.mediaId, 'p2'))).toBe('message.media.unknown');
    // Without a plugin (the operator's view) any live id is found.
    expect(store.get(media.mediaId).pluginId).toBe('p1');
    const { uploadId } = await store.begin({ pluginId: 'p1', contentType: 'text/plain', size: 2 });
    expect(await codeOf(store.append('p2', uploadId, 0, 'AAA='))).toBe('message.media.unknown');
    expect(await codeOf(store.finish('p2', uploadId))).toBe('message.media.unknown');
  });

  it('forgets media when they expire and deletes their bytes', async () => {
    const store = await open({ ttlMilliseconds: 1_000 });
    const media = await upload(store, 'p1', PNG, 'image/png');
    clock += 999;
    expect(store.get(media.mediaId, 'p1').size).toBe(PNG.length);
    clock += 1;
    expect(await codeOf(() => store.get(media.mediaId, 'p1'))).toBe('message.media.unknown');
    expect(await codeOf(() => store.open(media.mediaId))).toBe('message.media.unknown');
    expect(store.usedBytes).toBe(0);
    await new Promise((r) => setTimeout(r, 20));
    expect(readdirSync(join(root, 'media'))).toEqual([]);
  });

  it('drops an upload that waits too long for its next chunk', async () => {
    const store = await open({ idleMilliseconds: 1_000 });
    const { uploadId } = await store.begin({ pluginId: 'p1', contentType: 'text/plain', size: 6 });
    await store.append('p1', uploadId, 0, 'AAAA');
    clock += 1_000;
    expect(await codeOf(store.append('p1', uploadId, 3, 'AAAA'))).toBe('message.media.unknown');
    expect(store.usedBytes).toBe(0);
  });
});
