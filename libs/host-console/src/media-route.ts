import { ADMIN_ROUTES } from '@host/admin-api';
import { HostError, isHostError, type MediaStore } from '@host/host-core';
import { implementRoute, type RouteDef } from '@host/host-routes';
import { pipeline } from 'node:stream/promises';

/** Image types a browser may show from this route; anything else is a download. */
const SHOWN_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** The path under /api where the console's outgoing bodies point for uploaded media (GET /api/console/media/{mediaId}). */
export function consoleMediaUrl(mediaId: string): string {
  return `/api/console/media/${encodeURIComponent(mediaId)}`;
}

/**
 * GET /console/media/{mediaId}: the bytes of a plugin's upload, for the admin app to show the image a plugin sent
 * in the console (behind the admin token, like every console route). The type a browser gets is one of the
 * image types the store checked the bytes of, or application/octet-stream as an attachment, never a type that
 * runs (HTML, SVG), and the answer may not be sniffed or run scripts.
 */
export function consoleMediaRoutes(media: MediaStore): RouteDef[] {
  return [
    implementRoute(ADMIN_ROUTES.consoleMedia, async ({ params, res }) => {
      const mediaId = params['mediaId'] ?? '';
      let stored;
      try {
        stored = media.get(mediaId);
      } catch (e) {
        if (isHostError(e) && e.code === 'message.media.unknown') throw new HostError('MEDIA_NOT_FOUND', undefined, { mediaId });
        throw e;
      }
      const shown = SHOWN_TYPES.has(stored.contentType);
      res.status(200).set({
        'content-type': shown ? stored.contentType : 'application/octet-stream',
        'content-length': String(stored.size),
        'x-content-type-options': 'nosniff',
        'content-security-policy': "default-src 'none'; sandbox",
        'cache-control': 'private, max-age=300',
        ...(shown ? {} : { 'content-disposition': 'attachment' }),
      });
      await pipeline(media.open(mediaId), res);
      return undefined;
    }),
  ];
}
