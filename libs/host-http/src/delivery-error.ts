import {
  ERROR_CATALOG,
  MessageResponseSchema,
  parseJsonWithin,
  toValidationIssues,
  type HttpDeliveryErrorCode,
  type MessageResponse,
} from '@host/protocol';
import type { ExchangeResponse } from './exchange';
import { isJsonContentType } from './manifest-fetch';
import { HttpTransportError, type TransportErrorKind } from './transport-error';

/** A failed delivery, with a stable `http.*` code for the outcome and the health view. */
export class DeliveryError extends Error {
  readonly code: HttpDeliveryErrorCode;
  readonly details: Record<string, unknown>;
  constructor(code: HttpDeliveryErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'DeliveryError';
    this.code = code;
    this.details = details;
  }
}

const KIND_TO_CODE: Record<TransportErrorKind, HttpDeliveryErrorCode> = {
  address_refused: 'http.address_refused',
  unreachable: 'http.unreachable',
  timeout: 'http.timeout',
  tls: 'http.tls',
  redirect: 'http.status',
  status: 'http.status',
  not_json: 'http.response.invalid',
  too_large: 'http.response.too_large',
  invalid: 'http.response.invalid',
};

export function toDeliveryError(e: unknown): DeliveryError {
  if (e instanceof DeliveryError) return e;
  if (e instanceof HttpTransportError) return new DeliveryError(KIND_TO_CODE[e.kind], e.message, e.details);
  return new DeliveryError('http.unreachable', `The request failed: ${(e as Error)?.message ?? String(e)}`);
}

function snippet(body: Buffer): string {
  const text = body.subarray(0, 300).toString('utf8');
  return body.length > 300 ? `${text}...` : text;
}

/**
 * Reads a plugin's answer to an event: 200 with a valid message response, or
 * a DeliveryError saying what is wrong with it and how to fix it.
 */
export function parseMessageResponse(res: ExchangeResponse): MessageResponse {
  if (res.status === 401) {
    throw new DeliveryError(
      'http.signature_rejected',
      `The plugin answered 401: ${snippet(res.body) || 'no body'}. ${ERROR_CATALOG['http.signature_rejected'].message}`,
      {
        status: 401,
        body: snippet(res.body),
      },
    );
  }
  if (res.status !== 200) {
    const location = res.headers['location'];
    const redirect =
      res.status >= 300 && res.status < 400
        ? ` redirecting to ${String(location)}; redirects are not followed, register the final URL`
        : '';
    throw new DeliveryError('http.status', `The plugin answered ${res.status}${redirect}; expected 200 with a message response.`, {
      status: res.status,
      ...(location ? { location: String(location) } : {}),
      body: snippet(res.body),
    });
  }
  if (!isJsonContentType(res.headers['content-type'])) {
    throw new DeliveryError(
      'http.response.invalid',
      `The plugin answered with content-type "${String(res.headers['content-type'] ?? 'none')}"; answer application/json.`,
      {
        contentType: res.headers['content-type'] ?? null,
      },
    );
  }
  const read = parseJsonWithin(res.body.toString('utf8'));
  if (!read.ok && read.reason === 'shape') {
    throw new DeliveryError('http.response.too_complex', `The plugin response is refused: ${read.message}.`, { body: snippet(res.body) });
  }
  if (!read.ok) {
    throw new DeliveryError('http.response.invalid', `The plugin response is not valid JSON: ${read.message}`, {
      body: snippet(res.body),
    });
  }
  const json = read.value;
  const parsed = MessageResponseSchema.safeParse(json);
  if (!parsed.success) {
    const issues = toValidationIssues(parsed.error, 'response');
    throw new DeliveryError(
      'http.response.invalid',
      `The plugin response is not a valid message response: ${issues.map((i) => i.message).join(' ')}`,
      { issues },
    );
  }
  return parsed.data;
}
