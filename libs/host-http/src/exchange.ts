import type { Dispatcher } from 'undici';
import { HttpTransportError } from './transport-error';

export interface ExchangeRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Whole exchange: waiting for a connection, connecting, sending, and reading the complete response body. */
  timeoutMilliseconds: number;
  /** Response bodies above this many bytes are refused, counted while reading. */
  maxResponseBytes: number;
}

export interface ExchangeResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * One request/response with a total deadline and a response size cap that
 * holds also for chunked bodies without Content-Length. Redirects are never
 * followed (plain dispatch does not follow them); the caller sees the 3xx.
 *
 * This drives undici's dispatcher directly instead of `request()`: no body
 * stream, no AbortSignal, one timer. The HTTP benchmark showed those costs
 * to be a large share of the host's per-event overhead.
 */
export function exchange(dispatcher: Dispatcher, req: ExchangeRequest): Promise<ExchangeResponse> {
  return new Promise<ExchangeResponse>((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    let settled = false;
    let failure: Error | undefined;
    let status = 0;
    let headers: Record<string, string | string[] | undefined> = {};
    const chunks: Buffer[] = [];
    let size = 0;

    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      failure = err;
      clearTimeout(timer);
      reject(err);
      // Stops the request on its socket; a request still queued for a
      // connection is stopped when it starts (onRequestStart below).
      if (controller && !controller.aborted) controller.abort(err);
    };

    const timer = setTimeout(() => {
      fail(
        new HttpTransportError('timeout', `No complete answer within ${req.timeoutMilliseconds} ms.`, {
          details: { timeoutMilliseconds: req.timeoutMilliseconds },
        }),
      );
    }, req.timeoutMilliseconds);

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (failure) c.abort(failure);
      },
      onResponseStart(_c, statusCode, responseHeaders) {
        if (statusCode < 200) return; // 1xx: the final answer follows
        status = statusCode;
        headers = responseHeaders as Record<string, string | string[] | undefined>;
        const declared = Number(responseHeaders['content-length']);
        if (Number.isFinite(declared) && declared > req.maxResponseBytes) fail(tooLarge(req.maxResponseBytes, declared));
      },
      onResponseData(_c, chunk) {
        if (settled) return;
        size += chunk.length;
        if (size > req.maxResponseBytes) fail(tooLarge(req.maxResponseBytes));
        else chunks.push(chunk);
      },
      onResponseEnd() {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ status, headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) });
      },
      onResponseError(_c, err) {
        fail(err);
      },
    };

    try {
      dispatcher.dispatch(
        {
          method: req.method,
          path: req.path,
          headers: req.headers,
          body: req.body,
          // The timer above is the real deadline; these only keep undici's
          // own (300 s) defaults from mattering.
          headersTimeout: req.timeoutMilliseconds + 1000,
          bodyTimeout: req.timeoutMilliseconds + 1000,
        },
        handler,
      );
    } catch (e) {
      fail(e as Error);
    }
  });
}

function tooLarge(limit: number, declared?: number): HttpTransportError {
  return new HttpTransportError(
    'too_large',
    `The response is larger than ${limit} bytes${declared === undefined ? '' : ` (Content-Length ${declared})`}.`,
    {
      details: { limitBytes: limit, ...(declared === undefined ? {} : { contentLength: declared }) },
    },
  );
}
