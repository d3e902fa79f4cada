import express, { Router } from 'express';
import type { HttpPluginRegistry } from './registry';

export interface HttpRegistrationRouterDeps {
  registry: HttpPluginRegistry;
}

/**
 * Admin routes of the HTTP transport, to mount under the API prefix (behind
 * the admin authentication):
 *
 *   POST /plugins/http               {baseUrl, requestTimeoutMilliseconds?, enabled?}
 *                                    -> 201 {plugin, signingSecret, notice}
 *   POST /plugins/:pluginId/refresh  -> 200 {plugin, previousVersion, changed}
 *
 * Failures are passed to `next` as HostErrors (REGISTRATION_*, BAD_REQUEST,
 * PLUGIN_NOT_FOUND, PLUGIN_STATE_CONFLICT) for the app's error handler.
 * Enable, disable, remove and health are registry methods the plugins routes call.
 */
export function createHttpRegistrationRouter({ registry }: HttpRegistrationRouterDeps): Router {
  const router = Router();
  // Parses only when the app has not parsed the body already.
  const json = express.json({ limit: '16kb' });

  router.post('/plugins/http', json, async (req, res) => {
    const result = await registry.register(req.body ?? {});
    res.status(201).json({
      ...result,
      notice: 'Copy the signing secret now: it is shown only once. Configure the plugin with it so it can verify requests from this host.',
    });
  });

  router.post('/plugins/:pluginId/refresh', async (req, res) => {
    res.json(await registry.refresh(String(req.params['pluginId'])));
  });

  return router;
}
