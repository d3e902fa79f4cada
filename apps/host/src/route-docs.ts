import { z } from 'zod';
import { defineRoute, type RouteDef } from '@host/host-api';
import { ConsoleMessageRequestSchema } from '@host/host-console';
import { RegisterHttpPluginSchema } from '@host/host-http';

/**
 * OpenAPI entries of the routers the host mounts beside the admin API (the
 * console provider and HTTP plugin registration), built from the same zod
 * schemas those routers validate with.
 */
export const consoleRouteDocs: RouteDef<unknown, unknown>[] = [
  defineRoute({
    method: 'post',
    path: '/console/messages',
    summary: 'Send a message as a user of the simulated bot and collect what plugins answer',
    description:
      'Delivers a message.created event and answers once every chosen plugin acknowledged or failed (and after waitMs more, when given) with {eventId, deliveries, outbound, refused}; outbound[].body is the exact QQ Bot request body.',
    tags: ['console'],
    body: ConsoleMessageRequestSchema,
    responses: { 200: { description: 'Deliveries and rendered outbound messages.' } },
    errors: ['BAD_REQUEST', 'UNAUTHORIZED'],
  }) as RouteDef<unknown, unknown>,
  defineRoute({
    method: 'get',
    path: '/console/events',
    summary: 'Server-Sent Events stream of event records (deliveries and outbound messages)',
    tags: ['console'],
    query: z.object({ history: z.coerce.number().int().min(0).optional() }),
    responses: { 200: { description: 'text/event-stream of event records.' } },
    errors: ['UNAUTHORIZED'],
  }) as RouteDef<unknown, unknown>,
  defineRoute({
    method: 'get',
    path: '/events',
    summary: 'Recent event records',
    tags: ['console'],
    query: z.object({ pluginId: z.string().optional(), limit: z.coerce.number().int().min(1).optional() }),
    responses: { 200: { description: 'The newest event records, newest first.' } },
    errors: ['UNAUTHORIZED'],
  }) as RouteDef<unknown, unknown>,
];

export const httpPluginRouteDocs: RouteDef<unknown, unknown>[] = [
  defineRoute({
    method: 'post',
    path: '/plugins/http',
    summary: 'Register an HTTP plugin by base URL',
    description: 'Fetches and validates GET {baseUrl}/host/plugin/manifest, then registers the plugin. The 201 answer shows the signing secret once.',
    tags: ['plugins'],
    body: RegisterHttpPluginSchema,
    responses: { 201: { description: 'The registered plugin and its signing secret.' } },
    errors: [
      'REGISTRATION_URL_INVALID',
      'REGISTRATION_URL_CREDENTIALS',
      'REGISTRATION_ADDRESS_REFUSED',
      'REGISTRATION_UNREACHABLE',
      'REGISTRATION_TIMEOUT',
      'REGISTRATION_REDIRECT',
      'REGISTRATION_HTTP_STATUS',
      'REGISTRATION_NOT_JSON',
      'REGISTRATION_TOO_LARGE',
      'REGISTRATION_MANIFEST_INVALID',
      'REGISTRATION_CAPABILITY_MISSING',
      'REGISTRATION_PROTOCOL_UNSUPPORTED',
      'REGISTRATION_ID_TAKEN',
    ],
  }) as RouteDef<unknown, unknown>,
  defineRoute({
    method: 'post',
    path: '/plugins/{pluginId}/refresh',
    summary: "Re-fetch an HTTP plugin's manifest (after its own deployment updated it)",
    tags: ['plugins'],
    params: { pluginId: 'The plugin id.' },
    responses: { 200: { description: 'The plugin with previousVersion and changed.' } },
    errors: ['PLUGIN_NOT_FOUND', 'REGISTRATION_UNREACHABLE', 'REGISTRATION_MANIFEST_INVALID'],
  }) as RouteDef<unknown, unknown>,
];
