import type { RouteContract } from '@host/admin-api';
import { HostError } from '@host/host-core';
import type { Request, RequestHandler, Response, Router } from 'express';
import { badRequest } from './error-handler';

export type { HttpMethod } from '@host/admin-api';

/** What a handler returns: the status (default 200) and the JSON body. */
export interface RouteResult {
  status?: number;
  body: unknown;
}

export interface RouteContext<B, Q> {
  req: Request;
  res: Response;
  params: Record<string, string>;
  body: B;
  query: Q;
}

/**
 * Answers a request: a RouteResult sent as JSON, or nothing when the handler
 * answered on `res` itself (a Server-Sent Events stream).
 */
export type RouteHandler<B, Q> = (ctx: RouteContext<B, Q>) => Promise<RouteResult | void>;

/**
 * One admin API route: its contract (documentation, from @host/admin-api) and
 * its handler in one object, so the OpenAPI document lists exactly the routes
 * that are mounted, with the schemas that validate them.
 */
export interface RouteDef<B = unknown, Q = unknown> extends RouteContract<B, Q> {
  /** Middleware to run before validation (multer for uploads, a body parser). */
  before?: RequestHandler[];
  handler?: RouteHandler<B, Q>;
}

/** Keeps the handler's body and query types tied to the route's schemas. */
export function defineRoute<B = undefined, Q = undefined>(def: RouteDef<B, Q>): RouteDef<B, Q> {
  return def;
}

/**
 * A route from its contract and its handler. The result is typed loosely so
 * routes of different bodies fit one list.
 */
export function implementRoute<B, Q>(
  contract: RouteContract<B, Q>,
  handler: RouteHandler<B, Q>,
  options: { before?: RequestHandler[] } = {},
): RouteDef<unknown, unknown> {
  return { ...contract, ...options, handler } as RouteDef<unknown, unknown>;
}

/** `/plugins/{pluginId}` -> `/plugins/:pluginId` */
export function expressPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

/** Registers routes on `router`, validating query and body with their schemas. */
export function mountRoutes(router: Router, routes: RouteDef<unknown, unknown>[]): void {
  for (const route of routes) {
    if (!route.handler) continue;
    const handler = route.handler;
    router[route.method](expressPath(route.path), ...(route.before ?? []), async (req: Request, res: Response) => {
      let query: unknown = undefined;
      if (route.query) {
        const q = route.query.safeParse(req.query);
        if (!q.success) throw badRequest(q.error, 'query string');
        query = q.data;
      }
      let body: unknown = undefined;
      const bodySchema = route.body ?? route.multipart?.fields;
      if (bodySchema) {
        const b = bodySchema.safeParse(req.body ?? {});
        if (!b.success) throw badRequest(b.error, route.multipart ? 'form data' : 'request body');
        body = b.data;
      }
      const params = Object.fromEntries(Object.entries(req.params).map(([k, v]) => [k, String(v)]));
      const result = await handler({ req, res, params, body, query });
      if (res.headersSent) return;
      if (!result) throw new Error(`${route.method.toUpperCase()} ${route.path} answered nothing`);
      res.status(result.status ?? 200).json(result.body);
    });
  }
}

export function notFoundRoute(): RequestHandler {
  return (req, _res, next) =>
    next(
      new HostError(
        'NOT_FOUND',
        `No route ${req.method} ${req.originalUrl.split('?')[0]}. The admin API is described at GET /api/openapi.json.`,
      ),
    );
}
