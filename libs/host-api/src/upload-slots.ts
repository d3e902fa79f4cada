import { HostError } from '@host/host-core';
import type { RequestHandler } from 'express';

/** Package uploads the host receives and checks at the same time. */
export const DEFAULT_MAX_CONCURRENT_UPLOADS = 2;

/**
 * Middleware in front of the upload parser: at most `max` uploads are read
 * and installed at once (each may hold up to HOST_MAX_UPLOAD_BYTES in
 * memory); one more is refused at once with 503 INSTALL_UPLOADS_BUSY and
 * Retry-After, before its body is read. A slot is freed when its response
 * has been sent or its connection closed.
 */
export function uploadSlots(max: number = DEFAULT_MAX_CONCURRENT_UPLOADS): RequestHandler {
  let active = 0;
  return (_req, res, next) => {
    if (active >= max) {
      res.setHeader('Retry-After', '5');
      // The body is not read: the connection closes after the answer instead of draining a large upload.
      res.setHeader('Connection', 'close');
      next(
        new HostError(
          'INSTALL_UPLOADS_BUSY',
          `The host is already receiving ${active} packages (at most ${max} at once). Retry in a few seconds.`,
          { limit: max },
        ),
      );
      return;
    }
    active++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      active--;
    };
    res.once('finish', release);
    res.once('close', release);
    next();
  };
}
