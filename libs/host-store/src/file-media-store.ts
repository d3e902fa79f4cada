import { HostError, type MediaStore, type MediaUploadRequest, type StoredMedia } from '@host/host-core';
import { LIMITS, MEDIA_SIGNATURE_BYTES, mediaTypeProblem, sniffMediaType } from '@host/protocol';
import { randomBytes } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

/** The media directory's name in the data directory. */
export const MEDIA_DIR_NAME = 'media';

/** The limits of a media store; each defaults to the protocol's (LIMITS). */
export interface MediaStoreLimits {
  maxUploadBytes: number;
  maxChunkBytes: number;
  maxStoreBytes: number;
  ttlMilliseconds: number;
  idleMilliseconds: number;
  uploadsPerMinute: number;
}

export interface FileMediaStoreOptions {
  /** Where the bytes go; emptied when the store opens (media ids do not outlive the host). */
  dir: string;
  limits?: Partial<MediaStoreLimits>;
  now?: () => number;
  /** How often expired media and idle uploads are deleted (default 30 s; 0: only when the store is used). */
  sweepEveryMilliseconds?: number;
}

/** The format the first bytes are, of those the protocol checks; undefined for any other. */
export function sniffContentType(head: Buffer): string | undefined {
  return sniffMediaType(head);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const MINUTE = 60_000;

interface Upload {
  readonly pluginId: string;
  readonly contentType: string;
  readonly size: number;
  readonly fileName?: string;
  readonly path: string;
  readonly handle: fs.FileHandle;
  received: number;
  busy: boolean;
  lastAt: number;
}

interface Kept extends StoredMedia {
  readonly path: string;
}

/**
 * The media store under the data directory (docs/protocol/v2.md 4.12). Each upload is a file written chunk by
 * chunk at its offset, so no more than the chunk being written is in memory; its declared size is reserved
 * against `maxStoreBytes` when it begins, so uploads under way cannot together pass the bound. On finish the
 * first bytes are checked against the declared type and the upload becomes media with an id of its own, which
 * only its plugin's messages may name, until it expires; expired media and idle uploads are deleted by a sweep
 * and whenever the store is used. The directory is emptied on open: ids die with the host.
 */
export class FileMediaStore implements MediaStore {
  readonly limits: MediaStoreLimits;
  private readonly uploads = new Map<string, Upload>();
  private readonly media = new Map<string, Kept>();
  private readonly started = new Map<string, number[]>();
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private reserved = 0;

  private constructor(private readonly o: FileMediaStoreOptions) {
    this.now = o.now ?? Date.now;
    this.limits = {
      maxUploadBytes: LIMITS.maxMediaUploadBytes,
      maxChunkBytes: LIMITS.maxMediaChunkBytes,
      maxStoreBytes: LIMITS.maxMediaStoreBytes,
      ttlMilliseconds: LIMITS.mediaTtlMilliseconds,
      idleMilliseconds: LIMITS.mediaUploadIdleMilliseconds,
      uploadsPerMinute: LIMITS.maxMediaUploadsPerMinute,
      ...o.limits,
    };
  }

  /** Opens the store: empties (or makes) its directory and starts the sweep. */
  static async open(o: FileMediaStoreOptions): Promise<FileMediaStore> {
    await fs.rm(o.dir, { recursive: true, force: true });
    await fs.mkdir(o.dir, { recursive: true, mode: 0o700 });
    const store = new FileMediaStore(o);
    const every = o.sweepEveryMilliseconds ?? 30_000;
    if (every > 0) {
      store.timer = setInterval(() => store.sweep(), every);
      store.timer.unref();
    }
    return store;
  }

  /** Bytes kept or reserved: finished media and the declared size of uploads under way. */
  get usedBytes(): number {
    return this.reserved;
  }

  async begin(request: MediaUploadRequest): Promise<{ uploadId: string; maxChunkBytes: number }> {
    this.sweep();
    const { pluginId, contentType, size } = request;
    if (size > this.limits.maxUploadBytes) {
      throw new HostError(
        'message.media.too_large',
        `the upload declares ${size} bytes; the host takes at most ${this.limits.maxUploadBytes} (send a smaller file, or serve it from a URL)`,
        { size, maxUploadBytes: this.limits.maxUploadBytes },
      );
    }
    const typeProblem = mediaTypeProblem(contentType);
    if (typeProblem) throw new HostError('message.media.type_mismatch', typeProblem, { contentType });
    this.countStart(pluginId);
    if (this.reserved + size > this.limits.maxStoreBytes) {
      throw new HostError(
        'message.media.store_full',
        `the host keeps ${this.reserved} bytes of uploaded media and takes at most ${this.limits.maxStoreBytes}; try again when older media expire`,
        { usedBytes: this.reserved, maxStoreBytes: this.limits.maxStoreBytes },
      );
    }
    const uploadId = newId();
    const path = join(this.o.dir, uploadId);
    const handle = await fs.open(path, 'wx+', 0o600);
    this.reserved += size;
    this.uploads.set(uploadId, {
      pluginId,
      contentType,
      size,
      ...(request.fileName !== undefined ? { fileName: request.fileName } : {}),
      path,
      handle,
      received: 0,
      busy: false,
      lastAt: this.now(),
    });
    return { uploadId, maxChunkBytes: this.limits.maxChunkBytes };
  }

  async append(pluginId: string, uploadId: string, offset: number, base64: string): Promise<{ received: number }> {
    const upload = this.liveUpload(pluginId, uploadId);
    // A chunk sent while the one before is being written is refused without dropping the upload: that one goes on.
    if (upload.busy) {
      throw new HostError(
        'message.media.upload_invalid',
        `a chunk of upload ${uploadId} is still being written; send chunks one at a time`,
        {
          uploadId,
        },
      );
    }
    const refuse = (code: 'message.media.upload_invalid' | 'message.media.too_large', message: string, details: object): never => {
      this.drop(uploadId);
      throw new HostError(code, `${message}; the upload is dropped, start again with media.upload`, { uploadId, ...details });
    };
    if (offset !== upload.received) {
      refuse('message.media.upload_invalid', `the chunk starts at byte ${offset}, but ${upload.received} bytes were received`, {
        offset,
        received: upload.received,
      });
    }
    if (base64.length % 4 !== 0 || !BASE64.test(base64)) {
      refuse('message.media.upload_invalid', 'the chunk data is not base64 (RFC 4648, with padding)', {});
    }
    // The decoded length, known before decoding: nothing larger than a chunk is ever made.
    const bytes = (base64.length / 4) * 3 - (base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0);
    if (bytes === 0) refuse('message.media.upload_invalid', 'the chunk carries no bytes', {});
    if (bytes > this.limits.maxChunkBytes) {
      refuse('message.media.too_large', `the chunk carries ${bytes} bytes; a chunk carries at most ${this.limits.maxChunkBytes}`, {
        chunkBytes: bytes,
        maxChunkBytes: this.limits.maxChunkBytes,
      });
    }
    if (upload.received + bytes > upload.size) {
      refuse('message.media.too_large', `the chunks carry more than the ${upload.size} bytes the upload declared`, {
        size: upload.size,
      });
    }
    upload.busy = true;
    try {
      const data = Buffer.from(base64, 'base64');
      await upload.handle.write(data, 0, data.length, offset);
      upload.received += data.length;
      upload.lastAt = this.now();
      return { received: upload.received };
    } catch (e) {
      this.drop(uploadId);
      throw e;
    } finally {
      upload.busy = false;
    }
  }

  async finish(pluginId: string, uploadId: string): Promise<StoredMedia> {
    const upload = this.liveUpload(pluginId, uploadId);
    if (upload.busy || upload.received !== upload.size) {
      if (!upload.busy) this.drop(uploadId);
      throw new HostError(
        'message.media.upload_invalid',
        upload.busy
          ? `a chunk of upload ${uploadId} is still being written; finish after its answer`
          : `media.finish came after ${upload.received} of the ${upload.size} bytes the upload declared; the upload is dropped, start again with media.upload`,
        { uploadId, received: upload.received, size: upload.size },
      );
    }
    this.uploads.delete(uploadId);
    const head = Buffer.alloc(MEDIA_SIGNATURE_BYTES);
    let headBytes = 0;
    try {
      ({ bytesRead: headBytes } = await upload.handle.read(head, 0, head.length, 0));
    } finally {
      await upload.handle.close().catch(() => undefined);
    }
    const declared = upload.contentType;
    const mismatch = mediaTypeProblem(declared, head.subarray(0, headBytes));
    if (mismatch) {
      this.reserved -= upload.size;
      void fs.rm(upload.path, { force: true });
      const actual = sniffMediaType(head.subarray(0, headBytes));
      throw new HostError('message.media.type_mismatch', mismatch, { contentType: declared, ...(actual ? { detected: actual } : {}) });
    }
    const mediaId = newId();
    const kept: Kept = {
      mediaId,
      pluginId,
      contentType: declared,
      size: upload.size,
      ...(upload.fileName !== undefined ? { fileName: upload.fileName } : {}),
      expiresAt: this.now() + this.limits.ttlMilliseconds,
      path: upload.path,
    };
    this.media.set(mediaId, kept);
    const { path: _path, ...media } = kept;
    return media;
  }

  get(mediaId: string, pluginId?: string): StoredMedia {
    const kept = this.media.get(mediaId);
    if (kept && kept.expiresAt <= this.now()) this.expire(mediaId);
    // Another plugin's id is answered as an unknown one: a plugin learns nothing of others' uploads.
    if (!kept || kept.expiresAt <= this.now() || (pluginId !== undefined && kept.pluginId !== pluginId)) {
      throw new HostError(
        'message.media.unknown',
        `media id ${mediaId} is not one of ${pluginId ?? 'the host'}'s uploads: it expired (media ids live ${Math.round(this.limits.ttlMilliseconds / 60_000)} minutes), was never given, or the host restarted; upload the bytes again`,
        { mediaId },
      );
    }
    const { path: _path, ...media } = kept;
    return media;
  }

  open(mediaId: string): Readable {
    this.get(mediaId);
    return createReadStream(this.media.get(mediaId)!.path);
  }

  /** Deletes expired media and uploads idle for longer than the limit. */
  sweep(): void {
    const now = this.now();
    for (const [id, m] of this.media) if (m.expiresAt <= now) this.expire(id);
    for (const [id, u] of this.uploads) if (!u.busy && u.lastAt + this.limits.idleMilliseconds <= now) this.drop(id);
    for (const [id, times] of this.started) if (times.every((t) => t <= now - MINUTE)) this.started.delete(id);
  }

  /** Stops the sweep and closes the files of uploads under way (their bytes go with the next open). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await Promise.all([...this.uploads.values()].map((u) => u.handle.close().catch(() => undefined)));
    this.uploads.clear();
  }

  private liveUpload(pluginId: string, uploadId: string): Upload {
    const upload = this.uploads.get(uploadId);
    if (upload && !upload.busy && upload.lastAt + this.limits.idleMilliseconds <= this.now()) this.drop(uploadId);
    const live = this.uploads.get(uploadId);
    if (!live || live.pluginId !== pluginId) {
      throw new HostError(
        'message.media.unknown',
        `upload ${uploadId} is not under way for ${pluginId}: it was finished or dropped, it waited more than ${Math.round(this.limits.idleMilliseconds / 1000)} s for its next chunk, or it was never begun; start again with media.upload`,
        { uploadId },
      );
    }
    return live;
  }

  private countStart(pluginId: string): void {
    const now = this.now();
    const times = (this.started.get(pluginId) ?? []).filter((t) => t > now - MINUTE);
    if (times.length >= this.limits.uploadsPerMinute) {
      this.started.set(pluginId, times);
      const wait = Math.max(0, times[0]! + MINUTE - now);
      throw new HostError(
        'message.media.rate_limited',
        `${pluginId} began ${times.length} uploads in the last minute (at most ${this.limits.uploadsPerMinute}); try again in ${Math.ceil(wait / 1000)} s`,
        { pluginId, retryAfterMilliseconds: wait },
      );
    }
    times.push(now);
    this.started.set(pluginId, times);
  }

  private drop(uploadId: string): void {
    const upload = this.uploads.get(uploadId);
    if (!upload) return;
    this.uploads.delete(uploadId);
    this.reserved -= upload.size;
    void upload.handle
      .close()
      .catch(() => undefined)
      .then(() => fs.rm(upload.path, { force: true }))
      .catch(() => undefined);
  }

  private expire(mediaId: string): void {
    const kept = this.media.get(mediaId);
    if (!kept) return;
    this.media.delete(mediaId);
    this.reserved -= kept.size;
    // A send that opened the file before keeps reading it: an unlinked file lives while it is open.
    void fs.rm(kept.path, { force: true }).catch(() => undefined);
  }
}

function newId(): string {
  return randomBytes(18).toString('base64url');
}
