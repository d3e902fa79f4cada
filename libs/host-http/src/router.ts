import { ADMIN_ROUTES, type RefreshHttpPluginResponse, type RegisterHttpPluginResponse } from '@host/admin-api';
import { HostError } from '@host/host-core';
import { implementRoute, jsonBody, mountRoutes, type RouteDef } from '@host/host-routes';
import { PLUGIN_ID_PATTERN } from '@host/protocol';
import { Router } from 'express';
import type { HttpPluginRegistry } from './registry';

export interface HttpRegistrationRouterDeps {
  registry: HttpPluginRegistry;
}

/**
 * Admin routes of the HTTP transport, to mount under the API prefix (behind
 * the admin authentication), each implementing its contract from
 * @host/admin-api (which lists every error code it can answer with):
 *
 *   POST /plugins/http               {baseUrl, requestTimeoutMilliseconds?, enabled?}
 *                                    -> 201 {plugin, signingSecret, notice, commandConflicts?}
 *   POST /plugins/{pluginId}/refresh -> 200 {plugin, previousVersion, changed, changes, confirmationRequired, incoming?}
 *   POST /plugins/{pluginId}/refresh/confirm {sha256} -> 200 as refresh, or 409 when the manifest changed again
 *
 * Failures are thrown as HostErrors for the app's error handler.
 * Enable, disable, remove and health are registry methods the plugins routes call.
 */
export function httpRegistrationRoutes({ registry }: HttpRegistrationRouterDeps): RouteDef[] {
  return [
    implementRoute(
      ADMIN_ROUTES.registerHttpPlugin,
      async ({ body }) => {
        const result = await registry.register(body);
        const commandConflicts = await registry.commandConflicts(result.plugin.pluginId);
        const answer: RegisterHttpPluginResponse = {
          ...result,
          ...(commandConflicts.length > 0 ? { commandConflicts } : {}),
          notice:
            'Copy the signing secret now: it is shown only once. Configure the plugin with it so it can verify requests from this host.',
        };
        return { status: 201, body: answer };
      },
      // Parses only when the app has not parsed the body already.
      { before: [jsonBody({ limit: '16kb' })] },
    ),
    implementRoute(ADMIN_ROUTES.refreshHttpPlugin, async ({ params }) => {
      const pluginId = params['pluginId']!;
      if (!PLUGIN_ID_PATTERN.test(pluginId))
        throw new HostError('PLUGIN_NOT_FOUND', `No plugin with pluginId ${pluginId}. List plugins with GET /api/plugins.`, { pluginId });
      const answer: RefreshHttpPluginResponse = await registry.refresh(pluginId);
      return { body: answer };
    }),
    implementRoute(
      ADMIN_ROUTES.confirmHttpRefresh,
      async ({ params, body }) => {
        const pluginId = params['pluginId']!;
        if (!PLUGIN_ID_PATTERN.test(pluginId))
          throw new HostError('PLUGIN_NOT_FOUND', `No plugin with pluginId ${pluginId}. List plugins with GET /api/plugins.`, { pluginId });
        const answer: RefreshHttpPluginResponse = await registry.confirmRefresh(pluginId, body.sha256);
        return { body: answer };
      },
      { before: [jsonBody({ limit: '16kb' })] },
    ),
  ];
}

/** The registration routes as a router of their own; failures go to the app's error handler. */
export function createHttpRegistrationRouter(deps: HttpRegistrationRouterDeps): Router {
  const router = Router();
  mountRoutes(router, httpRegistrationRoutes(deps));
  return router;
}
