import type { HostPaths, PluginLock, PluginLogStore, PluginRuntime, RegistryStore, SettingsStore } from '@host/host-core';
import type { PluginInstaller } from '@host/host-installer';
import express, { Router, type Express, type RequestHandler } from 'express';
import { requireAdmin } from './auth';
import { errorHandler } from './errors';
import { buildOpenApiDocument } from './openapi';
import type { HttpPluginControl } from './plugin-view';
import { defineRoute, mountRoutes, notFoundRoute, type RouteDef } from './route-table';
import { packageRoutes } from './routes/package-routes';
import { pluginRoutes } from './routes/plugin-routes';
import { HealthResponseSchema } from './schemas';

export const DEFAULT_MAX_UPLOAD_BYTES = 64 * 1024 * 1024;

/** A router another module adds under /api, behind the admin token. */
export interface ApiRouterMount {
  router: RequestHandler;
  /** Its routes, for the OpenAPI document (handlers not needed). */
  docs?: RouteDef<unknown, unknown>[];
}

export interface AppDeps {
  paths: HostPaths;
  store: RegistryStore;
  /** Plugin settings (values checked against each manifest's settings.configSchema). */
  settings: SettingsStore;
  installer: PluginInstaller;
  /**
   * The host-wide per-plugin lock start, stop and restart hold. Default: the
   * installer's, so they never interleave with an install or an update.
   */
  locks?: PluginLock;
  /** The stdio runtime; `createUnavailableRuntime()` until one is wired in. */
  runtime: PluginRuntime;
  /** SHA-256 (hex) of the admin token; see `ensureAdminToken`. */
  adminTokenHash: string;
  logs?: PluginLogStore;
  /** Enable, disable, remove and status of HTTP plugins; without it, start/stop only flip `enabled`. */
  http?: HttpPluginControl;
  maxUploadBytes?: number;
  /** Package uploads received and checked at once; see uploadSlots. */
  maxConcurrentUploads?: number;
  version?: string;
  /** Extra admin routers under /api (HTTP registration, ...). */
  apiRouters?: ApiRouterMount[];
  /** Routers at the site root without the admin token (the admin console's files). */
  rootRouters?: RequestHandler[];
  log?: (message: string) => void;
}

/**
 * The admin HTTP API. Pure wiring of its dependencies, so tests run it in
 * process with supertest and the app's main only adds config and listen.
 */
export function createApp(deps: AppDeps): Express {
  const maxUploadBytes = deps.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES;
  const startedAt = new Date();
  const version = deps.version ?? '0.0.0';
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  const routes: RouteDef<unknown, unknown>[] = [
    defineRoute({
      method: 'get',
      path: '/health',
      summary: 'Liveness of the host',
      auth: false,
      tags: ['host'],
      responses: { 200: { description: 'The host is up.', schema: HealthResponseSchema } },
      handler: async () => ({
        body: { status: 'ok', version, startedAt: startedAt.toISOString(), uptimeSeconds: Math.round((Date.now() - startedAt.getTime()) / 1000) },
      }),
    }) as RouteDef<unknown, unknown>,
    ...packageRoutes({ ...deps, maxUploadBytes }),
    ...pluginRoutes({ ...deps, locks: deps.locks ?? deps.installer.locks }),
  ];
  let openapi: Record<string, unknown> | undefined;
  routes.push(
    defineRoute({
      method: 'get',
      path: '/openapi.json',
      summary: 'This OpenAPI 3.1 document',
      tags: ['host'],
      responses: { 200: { description: 'The document.' } },
      handler: async () => ({ body: (openapi ??= buildOpenApiDocument([...routes, ...(deps.apiRouters ?? []).flatMap((m) => m.docs ?? [])], { version })) }),
    }) as RouteDef<unknown, unknown>,
  );

  const publicApi = Router();
  mountRoutes(publicApi, routes.filter((r) => r.auth === false));
  const adminApi = Router();
  adminApi.use(requireAdmin(deps.adminTokenHash));
  adminApi.use(express.json({ limit: '1mb' }));
  mountRoutes(adminApi, routes.filter((r) => r.auth !== false));
  for (const m of deps.apiRouters ?? []) adminApi.use(m.router);
  adminApi.use(notFoundRoute());

  app.use('/api', publicApi, adminApi);
  for (const r of deps.rootRouters ?? []) app.use(r);
  app.use(notFoundRoute());
  app.use(errorHandler({ maxUploadBytes, log: deps.log }));
  return app;
}
