import { HostError } from '@host/host-core';
import type { RequestHandler } from 'express';

/** What a package upload's multipart body holds besides the package: boundaries, part headers and its few small fields. */
export const MULTIPART_ALLOWANCE_BYTES = 64 * 1024;

/**
 * Middleware in front of the upload parser: a request whose Content-Length
 * already says it is larger than the package limit (and the multipart
 * allowance) is refused with 413 INSTALL_UPLOAD_TOO_LARGE before a byte of
 * its body is read, so a client that sent `Expect: 100-continue` never sends
 * it. The parser still counts the bytes of uploads that declare no length or
 * a wrong one.
 */
export function declaredUploadSize(maxUploadBytes: number): RequestHandler {
  return (req, res, next) => {
    const declared = Number(req.headers['content-length']);
    if (!Number.isFinite(declared) || declared <= maxUploadBytes + MULTIPART_ALLOWANCE_BYTES) return next();
    // The body is not read: the connection closes after the answer instead of draining it.
    res.setHeader('Connection', 'close');
    next(
      new HostError(
        'INSTALL_UPLOAD_TOO_LARGE',
        `The upload declares ${declared} bytes; the host accepts packages of up to ${maxUploadBytes} bytes (HOST_MAX_UPLOAD_BYTES). Remove unneeded files from the package or raise HOST_MAX_UPLOAD_BYTES.`,
        { limit: maxUploadBytes, setting: 'HOST_MAX_UPLOAD_BYTES' },
      ),
    );
  };
}
