import { ADMIN_ROUTES, CSRF_HEADER, type ErrorBody, type RouteContract } from '@host/admin-api';

/** A failed admin API request: the error body's code, message and details, and the HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly body?: ErrorBody,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** Validation problems by field path (`values.apiKey` -> message). */
  get issues(): { code: string; path: string; message: string }[] {
    const issues = this.details['issues'];
    return Array.isArray(issues) ? (issues as { code: string; path: string; message: string }[]) : [];
  }

  /** The session has ended or there is none: the app shows the sign-in page. */
  get signedOut(): boolean {
    return this.code === 'SESSION_EXPIRED' || this.code === 'UNAUTHORIZED';
  }
}

let csrfToken: string | undefined;
const signedOutListeners = new Set<(reason: ApiError) => void>();

/** The session's CSRF token, sent on every request that changes something. */
export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

/** Called when a request finds the session ended. */
export function onSignedOut(listener: (reason: ApiError) => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

/** `/plugins/{pluginId}` with `{pluginId: 'a.b'}` -> `/api/plugins/a.b` */
export function apiPath(
  contract: Pick<RouteContract, 'path'>,
  params: Record<string, string> = {},
  query?: Record<string, string>,
): string {
  const path = contract.path.replace(/\{([A-Za-z0-9_]+)\}/g, (_m, name: string) => encodeURIComponent(params[name] ?? ''));
  const qs = query ? `?${new URLSearchParams(query).toString()}` : '';
  return `/api${path}${qs}`;
}

export function headersFor(method: string, json: boolean): Record<string, string> {
  const h: Record<string, string> = { accept: 'application/json' };
  if (json) h['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) h[CSRF_HEADER] = csrfToken;
  return h;
}

/** Turns a failed answer into an ApiError; tells listeners when the session has ended. */
export function errorFrom(status: number, body: unknown): ApiError {
  const e = (body as ErrorBody | undefined)?.error;
  const err =
    e && typeof e.code === 'string'
      ? new ApiError(status, e.code, e.message, (e.details as Record<string, unknown>) ?? {}, body as ErrorBody)
      : new ApiError(status, 'INTERNAL', `HTTP ${status}`);
  if (err.signedOut) for (const l of signedOutListeners) l(err);
  return err;
}

/** Calls an admin API route by its contract; answers the JSON body or throws ApiError. */
export async function call<T>(
  contract: RouteContract<unknown, unknown>,
  options: { params?: Record<string, string>; query?: Record<string, string>; body?: unknown } = {},
): Promise<T> {
  const method = contract.method.toUpperCase();
  let res: Response;
  try {
    res = await fetch(apiPath(contract, options.params, options.query), {
      method,
      credentials: 'same-origin',
      headers: headersFor(method, options.body !== undefined),
      body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
    });
  } catch {
    // The app words this code itself (errorCodes.NETWORK): there is no message from the host.
    throw new ApiError(0, 'NETWORK', '');
  }
  const text = await res.text();
  let body: unknown = undefined;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!res.ok) throw errorFrom(res.status, body);
  return body as T;
}

/**
 * Uploads a plugin package with progress (fetch cannot report upload progress).
 * Resolves with the status and body of any answer, error bodies included, so
 * the caller can handle UPDATE_CONFIRMATION_REQUIRED.
 */
export function uploadPackage(
  file: File,
  startAfterInstall: boolean,
  onProgress: (fraction: number) => void,
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', apiPath(ADMIN_ROUTES.uploadPackage));
    for (const [k, v] of Object.entries(headersFor('POST', false))) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      let body: unknown;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = undefined;
      }
      resolve({ status: xhr.status, body });
    };
    xhr.onerror = () => reject(new ApiError(0, 'NETWORK', ''));
    const form = new FormData();
    form.append('startAfterInstall', startAfterInstall ? 'true' : 'false');
    form.append('package', file, file.name);
    xhr.send(form);
  });
}
