import { HostError } from '@host/host-core';
import type { ErrorCode } from '@host/protocol';
import type { Request, RequestHandler, Response, Router } from 'express';
import type { z } from 'zod';
import { badRequest } from './errors';

export type HttpMethod = 'get' | 'post' | 'put' | 'delete';

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
 * One admin API route: its documentation and its handler in one object, so
 * the OpenAPI document lists exactly the routes that exist, with the schemas
 * that validate them.
 */
export interface RouteDef<B = unknown, Q = unknown> {
  method: HttpMethod;
  /** OpenAPI-style path under /api, e.g. `/plugins/{pluginId}`. */
  path: string;
  summary: string;
  description?: string;
  tags?: string[];
  /** Requires the admin token (default true). */
  auth?: boolean;
  params?: Record<string, string>;
  query?: z.ZodType<Q>;
  body?: z.ZodType<B>;
  /** multipart/form-data: the file field and the schema of the other fields. */
  multipart?: { fileField: string; fileDescription: string; fields: z.ZodType<B> };
  responses: Record<number, { description: string; schema?: z.ZodType }>;
  errors?: ErrorCode[];
  /** Middleware to run before validation (multer for uploads). */
  before?: RequestHandler[];
  handler?: (ctx: RouteContext<B, Q>) => Promise<RouteResult>;
}

/** Keeps the handler's body and query types tied to the route's schemas. */
export function defineRoute<B = undefined, Q = undefined>(def: RouteDef<B, Q>): RouteDef<B, Q> {
  return def;
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
      if (!res.headersSent) res.status(result.status ?? 200).json(result.body);
    });
  }
}

export function notFoundRoute(): RequestHandler {
  return (req, _res, next) => next(new HostError('NOT_FOUND', `No route ${req.method} ${req.originalUrl.split("?")[0]}. The admin API is described at GET /api/openapi.json.`));
}
