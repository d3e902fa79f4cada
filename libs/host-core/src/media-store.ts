import type { Readable } from 'node:stream';

/** Bytes a plugin uploaded (media.upload, media.chunk, media.finish) and the host keeps until `expiresAt`. */
export interface StoredMedia {
  readonly mediaId: string;
  /** The plugin that uploaded it: the only one whose messages may name it. */
  readonly pluginId: string;
  readonly contentType: string;
  readonly size: number;
  readonly fileName?: string;
  /** Unix milliseconds after which the id is unknown and the bytes are deleted. */
  readonly expiresAt: number;
}

/** What media.upload declares. */
export interface MediaUploadRequest {
  pluginId: string;
  contentType: string;
  size: number;
  fileName?: string;
}

/**
 * Where the bytes plugins upload are kept (docs/protocol/v2.md 4.12): written as the chunks arrive, bounded in
 * size per upload and in total, counted per plugin and minute, checked against the declared content type, and
 * forgotten when they expire. Every refusal is a HostError with a `message.media.*` code.
 */
export interface MediaStore {
  /** Begins an upload. @throws HostError message.media.too_large, type_mismatch, rate_limited or store_full */
  begin(request: MediaUploadRequest): Promise<{ uploadId: string; maxChunkBytes: number }>;
  /**
   * Appends the next bytes (decoded from base64 by the store, so a bad encoding is its refusal too).
   * @throws HostError message.media.unknown, upload_invalid or too_large
   */
  append(pluginId: string, uploadId: string, offset: number, base64: string): Promise<{ received: number }>;
  /** Ends an upload. @throws HostError message.media.unknown, upload_invalid or type_mismatch */
  finish(pluginId: string, uploadId: string): Promise<StoredMedia>;
  /**
   * The media `mediaId` names, when it is live and, with `pluginId`, uploaded by that plugin (without it: any
   * plugin's, for the operator).
   * @throws HostError message.media.unknown
   */
  get(mediaId: string, pluginId?: string): StoredMedia;
  /** The bytes of live media, streamed from disk. @throws HostError message.media.unknown */
  open(mediaId: string): Readable;
}
