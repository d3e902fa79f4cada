import type { HostErrorCode } from '@host/host-errors';
import type { z } from 'zod';

export type HttpMethod = 'get' | 'post' | 'put' | 'delete';

/** One documented answer of a route. */
export interface ResponseContract {
  description: string;
  schema?: z.ZodType;
  /** Default application/json; text/event-stream for streams. */
  contentType?: string;
}

/**
 * The documentation half of an admin API route, as plain data: what it is
 * called with, what it answers and every error code it can answer with. The
 * host pairs each contract with its handler; the OpenAPI document, the admin
 * app and the tests read the same object.
 */
export interface RouteContract<B = unknown, Q = unknown> {
  method: HttpMethod;
  /** OpenAPI-style path under /api, e.g. `/plugins/{pluginId}`. */
  path: string;
  summary: string;
  description?: string;
  tags?: string[];
  /** Requires the admin token (default true). */
  auth?: boolean;
  /** Path parameters with their descriptions. */
  params?: Record<string, string>;
  query?: z.ZodType<Q>;
  body?: z.ZodType<B>;
  /** multipart/form-data: the file field and the schema of the other fields. */
  multipart?: { fileField: string; fileDescription: string; fields: z.ZodType<B> };
  /** Successful answers by HTTP status. */
  responses: Record<number, ResponseContract>;
  /**
   * Every catalogue code the route itself can answer with. UNAUTHORIZED,
   * SESSION_EXPIRED and AUTH_THROTTLED (for routes behind the admin token; CSRF_TOKEN_INVALID and
   * ORIGIN_REFUSED too when they change something), REQUEST_JSON_TOO_COMPLEX (behind the admin token or
   * with a JSON body), INTERNAL, and BAD_REQUEST for a path
   * parameter with malformed percent-encoding apply to every route with them
   * and are added by `declaredErrorCodes`.
   */
  errors: readonly HostErrorCode[];
}

/** Keeps the body and query types of a contract tied to its schemas. */
export function defineContract<B = undefined, Q = undefined>(contract: RouteContract<B, Q>): RouteContract<B, Q> {
  return contract;
}

/** What every route behind the admin token can answer: no credentials, or a session that ended. */
export const AUTH_ERRORS: readonly HostErrorCode[] = ['UNAUTHORIZED', 'SESSION_EXPIRED', 'AUTH_THROTTLED'];
/**
 * What a state-changing route behind the admin token answers besides: a
 * session-cookie request without the session's CSRF token, or from a page of
 * another site.
 */
export const SESSION_WRITE_ERRORS: readonly HostErrorCode[] = ['CSRF_TOKEN_INVALID', 'ORIGIN_REFUSED'];
/**
 * What every route behind the admin token answers while the host's database
 * server cannot be reached (checking the session already needs it).
 */
export const STORE_ERRORS: readonly HostErrorCode[] = ['STORE_UNAVAILABLE'];

/** What a route that reads a JSON body answers for one nested too deep or too wide (checked before parsing). */
export const JSON_BODY_ERRORS: readonly HostErrorCode[] = ['REQUEST_JSON_TOO_COMPLEX'];

/** Methods that change nothing; the others need the CSRF token with a session cookie. */
export function isSafeMethod(method: string): boolean {
  return ['GET', 'HEAD', 'OPTIONS'].includes(method.toUpperCase());
}

/** Every error code a route can answer with, the shared ones included. */
export function declaredErrorCodes(
  contract: Pick<RouteContract<unknown, unknown>, 'auth' | 'errors' | 'params' | 'body'> & { method?: HttpMethod },
): HostErrorCode[] {
  const guarded = contract.auth !== false;
  const codes: HostErrorCode[] = [
    ...(guarded ? AUTH_ERRORS : []),
    ...(guarded && contract.method && !isSafeMethod(contract.method) ? SESSION_WRITE_ERRORS : []),
    ...(contract.params ? (['BAD_REQUEST'] as HostErrorCode[]) : []),
    ...contract.errors,
    // Every JSON body is checked before it is parsed, and behind the admin token every request may carry one.
    ...(guarded || contract.body ? JSON_BODY_ERRORS : []),
    ...(guarded ? STORE_ERRORS : []),
    'INTERNAL',
  ];
  return [...new Set(codes)];
}

/** `GET /plugins/{pluginId}`: how routes are named in lists and messages. */
export function routeKey(contract: Pick<RouteContract<unknown, unknown>, 'method' | 'path'>): string {
  return `${contract.method.toUpperCase()} ${contract.path}`;
}

/**
 * The contract whose path template matches a request path (relative to /api,
 * without the query string), or undefined.
 */
export function matchRoute<C extends Pick<RouteContract<unknown, unknown>, 'method' | 'path'>>(
  contracts: readonly C[],
  method: string,
  path: string,
): C | undefined {
  const m = method.toLowerCase();
  // Literal segments win over parameters (`/plugins/http` before `/plugins/{pluginId}`).
  const candidates = contracts.filter((c) => c.method === m && templateRegExp(c.path).test(path));
  return candidates.sort((a, b) => paramCount(a.path) - paramCount(b.path))[0];
}

function templateRegExp(template: string): RegExp {
  const parts = template.split(/(\{[A-Za-z0-9_]+\})/).map((p) => (p.startsWith('{') ? '[^/]+' : p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${parts.join('')}$`);
}

function paramCount(template: string): number {
  return (template.match(/\{/g) ?? []).length;
}
