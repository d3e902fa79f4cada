import type { Dispatcher } from 'undici';
import { HttpTransportError } from './transport-error';

export interface ExchangeRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Whole exchange: connect, send, and read the complete response body. */
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
 * followed (undici's `request` does not follow them); the caller sees 3xx.
 */
export async function exchange(dispatcher: Dispatcher, req: ExchangeRequest): Promise<ExchangeResponse> {
  const controller = new AbortController();
  const timer = setTimeout(() => {
    controller.abort(
      new HttpTransportError('timeout', `No complete answer within ${req.timeoutMilliseconds} ms.`, {
        details: { timeoutMilliseconds: req.timeoutMilliseconds },
      }),
    );
  }, req.timeoutMilliseconds);
  try {
    const res = await dispatcher.request({
      method: req.method,
      path: req.path,
      headers: req.headers,
      body: req.body,
      signal: controller.signal,
      // The abort timer is the real deadline; these only keep undici from
      // cutting in earlier with its own 300 s defaults' errors.
      headersTimeout: req.timeoutMilliseconds + 1000,
      bodyTimeout: req.timeoutMilliseconds + 1000,
    });
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > req.maxResponseBytes) {
      res.body.destroy();
      throw tooLarge(req.maxResponseBytes, declared);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > req.maxResponseBytes) {
        res.body.destroy();
        throw tooLarge(req.maxResponseBytes);
      }
      chunks.push(chunk);
    }
    return { status: res.statusCode, headers: res.headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) };
  } catch (e) {
    // An abort surfaces as the reason we gave, or as undici's own abort error.
    if (controller.signal.aborted && !(e instanceof HttpTransportError)) {
      throw controller.signal.reason as HttpTransportError;
    }
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

function tooLarge(limit: number, declared?: number): HttpTransportError {
  return new HttpTransportError('too_large', `The response is larger than ${limit} bytes${declared === undefined ? '' : ` (Content-Length ${declared})`}.`, {
    details: { limitBytes: limit, ...(declared === undefined ? {} : { contentLength: declared }) },
  });
}
