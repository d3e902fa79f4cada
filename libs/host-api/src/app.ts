import { ADMIN_ROUTES, type HealthResponse, type ReadyResponse } from '@host/admin-api';
import {
  storeUnavailable,
  type HostPaths,
  type PluginLock,
  type PluginLogStore,
  type PluginRuntime,
  type RegistryStore,
  type SettingsStore,
  type StoreAvailability,
} from '@host/host-core';
import type { PluginInstaller } from '@host/host-installer';
import { PROTOCOL_VERSION, RELEASE_VERSIONS } from '@host/protocol';
import express, { Router, type Express, type RequestHandler } from 'express';
import { requireAdmin } from './auth';
import { AuthThrottle, type AuthThrottleOptions } from './auth-throttle';
import { buildOpenApiDocument } from './openapi';
import type { HttpPluginControl, ViewDeps } from './plugin-view';
import { errorHandler, implementRoute, jsonBody, mountRoutes, notFoundRoute, type RouteDef } from '@host/host-routes';
import { packageRoutes } from './routes/package-routes';
import { doctorRoutes, type DoctorIsolation } from './routes/doctor-routes';
import { sessionRoutes } from './routes/session-routes';
import { SessionStore, type SessionOptions } from './session';
import { pluginRoutes } from './routes/plugin-routes';

export const DEFAULT_MAX_UPLOAD_BYTES = 64 * 1024 * 1024;

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
  /** The stdio runtime (tests without one pass `createUnavailableRuntime()` of `@host/host-installer/testing`). */
  runtime: PluginRuntime;
  /** The store's database server, when it has one: GET /api/ready asks it (the files and the embedded database are never away). */
  storeAvailability?: StoreAvailability;
  /** SHA-256 (hex) of the admin token; see `ensureAdminToken`. */
  adminTokenHash: string;
  logs?: PluginLogStore;
  /** Enable, disable, remove and status of HTTP plugins; without it, start/stop only flip `enabled`. */
  http?: HttpPluginControl;
  /** Each plugin's event queue on this host, for the plugin views (see ViewDeps.queues). */
  queues?: ViewDeps['queues'];
  maxUploadBytes?: number;
  /** The built conformance worker script; without it POST .../doctor runs the suite in this process. */
  doctorWorker?: string;
  /** Longest time of one conformance run (default DOCTOR_RUN_TIMEOUT_MILLISECONDS, two minutes). */
  doctorTimeoutMilliseconds?: number;
  /** How the host isolates its stdio plugins: conformance runs start the plugin the same way. */
  doctorIsolation?: DoctorIsolation;
  /** Admin app sessions (sign-in with the token, then an HttpOnly cookie): a store, or options for a new one. */
  sessions?: SessionStore | SessionOptions;
  /**
   * Wrong admin tokens (at sign-in and as bearer tokens) throttled per client address with a small global
   * ceiling, counted and logged: a throttle (whose `counters` the host reports), or options for a new one.
   */
  authThrottle?: AuthThrottle | AuthThrottleOptions;
  /** Package uploads received and checked at once; see uploadSlots. */
  maxConcurrentUploads?: number;
  version?: string;
  /**
   * Routes other modules implement under /api (the console, HTTP plugin
   * registration), each from its contract in @host/admin-api. They are
   * mounted and documented like the admin API's own.
   */
  apiRoutes?: RouteDef<unknown, unknown>[];
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
  const sessions = deps.sessions instanceof SessionStore ? deps.sessions : new SessionStore(deps.sessions);
  const throttle = deps.authThrottle instanceof AuthThrottle ? deps.authThrottle : new AuthThrottle(deps.authThrottle);
  const app = express();
  app.disable('x-powered-by');
  // Every answer, errors and refusals included: a browser must never run a JSON answer as another type.
  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  });
  app.set('etag', false);

  const routes: RouteDef<unknown, unknown>[] = [
    implementRoute(ADMIN_ROUTES.health, async () => {
      const body: HealthResponse = {
        status: 'ok',
        version,
        protocolVersion: PROTOCOL_VERSION,
        sdkVersion: RELEASE_VERSIONS.sdkVersion,
        supportedSdkVersions: RELEASE_VERSIONS.supportedSdkVersions,
        startedAt: startedAt.toISOString(),
        uptimeSeconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
      };
      return { body };
    }),
    implementRoute(ADMIN_ROUTES.ready, async () => {
      if (!deps.storeAvailability) return { body: { status: 'ready', store: 'local' } satisfies ReadyResponse };
      const state = await deps.storeAvailability.check();
      if (!state.reachable) throw storeUnavailable(state);
      return { body: { status: 'ready', store: 'ok' } satisfies ReadyResponse };
    }),
    ...sessionRoutes({ sessions, adminTokenHash: deps.adminTokenHash, throttle }),
    ...packageRoutes({ ...deps, maxUploadBytes }),
    ...pluginRoutes({ ...deps, locks: deps.locks ?? deps.installer.locks }),
    ...doctorRoutes({ ...deps, ...(deps.doctorIsolation ? { isolation: deps.doctorIsolation } : {}) }),
    ...(deps.apiRoutes ?? []),
  ];
  // One list: what is mounted is what the document describes.
  let openapi: Record<string, unknown> | undefined;
  routes.push(implementRoute(ADMIN_ROUTES.openapi, async () => ({ body: (openapi ??= buildOpenApiDocument(routes, { version })) })));

  const publicApi = Router();
  mountRoutes(
    publicApi,
    routes.filter((r) => r.auth === false),
  );
  const adminApi = Router();
  adminApi.use(requireAdmin(deps.adminTokenHash, sessions, throttle));
  adminApi.use(jsonBody({ limit: '1mb' }));
  mountRoutes(
    adminApi,
    routes.filter((r) => r.auth !== false),
  );
  adminApi.use(notFoundRoute());

  app.use('/api', publicApi, adminApi);
  for (const r of deps.rootRouters ?? []) app.use(r);
  app.use(notFoundRoute());
  app.use(errorHandler({ maxUploadBytes, log: deps.log }));
  return app;
}
