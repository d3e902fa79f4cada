import { HostError, type MediaStore, type OutboundRequest, type OutboundSink } from '@host/host-core';
import { LIMITS, type MessagePart } from '@host/protocol';
import type { AddressPolicy } from './address-policy';
import { resolveChecked, type Resolver } from './pinned-connector';
import { HttpTransportError } from './transport-error';

export interface MediaGuardOptions {
  /** The host's address policy for HTTP plugins: media URLs get the same. */
  policy: AddressPolicy;
  resolver?: Resolver;
  /** Image and file parts one plugin may send per minute (default LIMITS.maxMediaUploadsPerMinute). */
  maxPerMinute?: number;
  /** How long resolving a URL's host may take (default 3 s). */
  resolveTimeoutMilliseconds?: number;
  now?: () => number;
  /** The bytes plugins uploaded: image and file parts with a mediaId are checked against it. */
  media?: MediaStore;
}

const MINUTE = 60_000;

/** The URLs of the image and file parts of `parts`, composites included, in order. */
export function mediaUrls(parts: readonly MessagePart[], out: string[] = [], depth = 0): string[] {
  for (const p of parts) {
    if ((p.type === 'image' || p.type === 'file') && p.url !== undefined) out.push(p.url);
    // Depth is bounded by the message checks before a message is rendered; this only keeps a hostile one finite.
    else if (p.type === 'composite' && depth < 16) mediaUrls(p.parts, out, depth + 1);
  }
  return out;
}

/** The image and file parts of `parts` that name uploaded bytes (mediaId), composites included, in order. */
export function uploadedMediaParts(
  parts: readonly MessagePart[],
  out: { type: 'image' | 'file'; mediaId: string }[] = [],
  depth = 0,
): { type: 'image' | 'file'; mediaId: string }[] {
  for (const p of parts) {
    if ((p.type === 'image' || p.type === 'file') && p.mediaId !== undefined) out.push({ type: p.type, mediaId: p.mediaId });
    else if (p.type === 'composite' && depth < 16) uploadedMediaParts(p.parts, out, depth + 1);
  }
  return out;
}

/**
 * What the host checks of an outgoing image or file before any provider fetches it (docs/protocol/v2.md 7.1):
 * the URL's host must be allowed by the address policy of HTTP plugins (a name is resolved and every address
 * checked), so no plugin has the host or its provider reach loopback, private or link-local services; and one
 * plugin sends at most `maxPerMinute` of them per minute. An image or file part that names uploaded bytes (mediaId)
 * must name the plugin's own live upload; it counts toward no rate here, as its upload did. Wraps the sink plugins send through; a refusal is the
 * plugin's error, and nothing is sent.
 */
export class MediaGuard {
  private readonly sent = new Map<string, number[]>();
  private readonly maxPerMinute: number;
  private readonly now: () => number;

  constructor(private readonly o: MediaGuardOptions) {
    this.maxPerMinute = o.maxPerMinute ?? LIMITS.maxMediaUploadsPerMinute;
    this.now = o.now ?? Date.now;
  }

  /**
   * `sink` behind the checks. `refused` hears each refusal before the plugin gets it, so the host can record it in
   * the event log with the event the reply answers (HostOutboundSink.noteRefusal).
   */
  wrap(sink: OutboundSink, refused?: (request: OutboundRequest, error: HostError) => void): OutboundSink {
    return {
      send: async (request) => {
        try {
          await this.check(request);
        } catch (e) {
          if (e instanceof HostError) refused?.(request, e);
          throw e;
        }
        return sink.send(request);
      },
    };
  }

  /** @throws HostError message.media.address_refused or message.media.rate_limited */
  async check(request: OutboundRequest): Promise<void> {
    const parts = request.message?.parts;
    if (!Array.isArray(parts)) return;
    for (const part of uploadedMediaParts(parts)) this.checkUploaded(request.pluginId, part);
    const urls = mediaUrls(parts);
    if (urls.length === 0) return;
    for (const url of urls) await this.checkAddress(url);
    this.count(request.pluginId, urls.length);
  }

  /** A mediaId must be the plugin's own live upload, and an image part's must be an image (docs/protocol/v2.md 7.1). */
  private checkUploaded(pluginId: string, part: { type: 'image' | 'file'; mediaId: string }): void {
    if (!this.o.media) {
      throw new HostError('message.media.unknown', `media id ${part.mediaId} is unknown: this host keeps no uploaded media`, {
        mediaId: part.mediaId,
      });
    }
    const media = this.o.media.get(part.mediaId, pluginId);
    if (part.type === 'image' && !media.contentType.startsWith('image/')) {
      throw new HostError(
        'message.media.type_mismatch',
        `media id ${part.mediaId} was uploaded as ${media.contentType}, not an image; send it in a file part`,
        { mediaId: part.mediaId, contentType: media.contentType },
      );
    }
  }

  private async checkAddress(url: string): Promise<void> {
    let hostname: string;
    try {
      hostname = new URL(url).hostname;
    } catch {
      // The message schema refuses such a URL before rendering; nothing to check here.
      return;
    }
    try {
      await resolveChecked(hostname, {
        policy: this.o.policy,
        ...(this.o.resolver ? { resolver: this.o.resolver } : {}),
        connectTimeoutMilliseconds: this.o.resolveTimeoutMilliseconds ?? 3_000,
      });
    } catch (e) {
      const why = e instanceof HttpTransportError ? e.message : String(e);
      throw new HostError('message.media.address_refused', `${url}: ${why}`, { url, hostname });
    }
  }

  private count(pluginId: string, n: number): void {
    const now = this.now();
    const times = (this.sent.get(pluginId) ?? []).filter((t) => t > now - MINUTE);
    if (times.length + n > this.maxPerMinute) {
      this.sent.set(pluginId, times);
      const wait = Math.max(0, (times[0] ?? now) + MINUTE - now);
      throw new HostError(
        'message.media.rate_limited',
        `${pluginId} sent ${times.length} images or files in the last minute (at most ${this.maxPerMinute}); try again in ${Math.ceil(wait / 1000)} s.`,
        { pluginId, retryAfterMilliseconds: wait },
      );
    }
    for (let i = 0; i < n; i++) times.push(now);
    this.sent.set(pluginId, times);
    // Plugins that stopped sending are forgotten, so the map holds only those active in the last minute.
    if (this.sent.size > 1_000) for (const [id, t] of this.sent) if (t.every((x) => x <= now - MINUTE)) this.sent.delete(id);
  }
}
