import { HostError, invalidRequest, toErrorDetails } from '@host/host-core';
import { HOST_VALIDATION_DOMAINS, isHostErrorCode, type HostErrorCode } from '@host/host-errors';
import { toValidationIssues } from '@host/protocol';
import type { ErrorRequestHandler } from 'express';
import { JSON_TOO_COMPLEX_TYPE } from './json-body';
import { z } from 'zod';

export function badRequest(error: z.ZodError, where: string): HostError {
  return invalidRequest(where, toValidationIssues(error, 'request', HOST_VALIDATION_DOMAINS));
}

interface HttpishError {
  status?: number;
  type?: string;
  code?: string;
  field?: string;
}

/**
 * Turns every failure into `{"error": {"code", "message", "details"}}`, where
 * `details` is an object (validation failures in `details.issues`).
 * Unknown failures become INTERNAL without leaking their text.
 */
export function errorHandler(options: { maxUploadBytes?: number; log?: (message: string) => void }): ErrorRequestHandler {
  return (err: unknown, _req, res, _next) => {
    let e: HostError;
    const h = err as HttpishError;
    if (err instanceof HostError) e = err;
    else if (err instanceof z.ZodError) e = badRequest(err, 'request');
    else if (h?.code === 'LIMIT_FILE_SIZE') {
      e = new HostError(
        'INSTALL_UPLOAD_TOO_LARGE',
        `The upload is larger than the host accepts (${options.maxUploadBytes ?? 'the'} bytes, HOST_MAX_UPLOAD_BYTES). Remove unneeded files from the package or raise HOST_MAX_UPLOAD_BYTES.`,
        { limit: options.maxUploadBytes, setting: 'HOST_MAX_UPLOAD_BYTES' },
      );
    } else if (typeof h?.code === 'string' && h.code.startsWith('LIMIT_')) {
      e = new HostError(
        'BAD_REQUEST',
        `The multipart upload is not valid (${h.code}${h.field ? ` on field "${h.field}"` : ''}). Send one file in the field "package".`,
      );
    } else if (err instanceof URIError) {
      // The router could not decode a path parameter (a stray % or a broken UTF-8 escape).
      e = new HostError('BAD_REQUEST', 'The URL has malformed percent-encoding. Encode path segments with encodeURIComponent.');
    } else if (h?.type === JSON_TOO_COMPLEX_TYPE) {
      e = new HostError('REQUEST_JSON_TOO_COMPLEX', (err as Error).message);
    } else if (h?.type === 'entity.parse.failed') {
      e = new HostError('BAD_REQUEST', 'The request body is not valid JSON. Send a JSON object with Content-Type: application/json.');
    } else if (h?.type === 'entity.too.large') {
      e = new HostError('BAD_REQUEST', 'The JSON body is too large (the admin API takes at most 1 MiB).');
    } else if (typeof (err as { code?: unknown })?.code === 'string' && isHostErrorCode((err as { code: string }).code)) {
      // HostError-shaped errors from other libraries (same catalogue, different class instance).
      const x = err as { code: HostErrorCode; message: string; details?: unknown };
      e = new HostError(x.code, x.message, toErrorDetails(x.details));
    } else {
      options.log?.(`unexpected error: ${(err as Error)?.stack ?? String(err)}`);
      e = new HostError('INTERNAL');
    }
    if (res.headersSent) return;
    const pendingUpdate = e.code === 'UPDATE_CONFIRMATION_REQUIRED' ? (e.details as { pendingUpdate?: unknown })?.pendingUpdate : undefined;
    if (e.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
    res.status(e.status).json({ error: e.toJSON(), ...(pendingUpdate ? { pendingUpdate } : {}) });
  };
}
