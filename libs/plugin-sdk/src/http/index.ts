import type { IncomingMessage, ServerResponse } from 'node:http';
import { HTTP_PATHS } from '@host/protocol';
import type { Plugin } from '../define-plugin';
import { HttpPluginServer, routeOf, sendError, type HttpHandler, type HttpPluginOptions } from './handler';

export {
  HTTP_ERROR_CODES,
  HTTP_ERRORS,
  NODE_HTTP_ERRORS,
  secretFromFile,
  type HttpErrorCode,
  type HttpHandler,
  type HttpPluginOptions,
  type SecretSource,
} from './handler';
export { signRequest, type SignatureRejection } from './signature';

/**
 * Serves a plugin over HTTP with nothing but `node:http`: `GET
 * /host/plugin/manifest` and `POST /host/plugin/events/message`, with the
 * host's signature checked on every event. Other paths answer 404.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { definePlugin } from '@host/plugin-sdk-v2';
 * import { createHttpHandler } from '@host/plugin-sdk-v2/http';
 *
 * const plugin = definePlugin({
 *   manifest: { pluginId: 'com.example.echo', name: 'Echo', version: '1.0.0', author: 'Example', protocolVersion: 2, permissions: ['messages.reply'] },
 *   async onMessage(ctx) {
 *     await ctx.reply('echo: ', ctx.text);
 *   },
 * });
 *
 * createServer(createHttpHandler(plugin, { secret: process.env.HOST_PLUGIN_SECRET ?? '' })).listen(8080);
 * ```
 */
export function createHttpHandler(plugin: Plugin, options: HttpPluginOptions): HttpHandler {
  const server = new HttpPluginServer(plugin, options);
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const route = routeOf(req.url);
    if (!route) return sendError(res, 'http.not_found', `this plugin serves ${HTTP_PATHS.manifest} and ${HTTP_PATHS.messageEvents}`);
    void server.handle(req, res, route);
  };
  return Object.assign(handler, { ready: server.ready, close: () => server.close() });
}

/** An Express-compatible middleware: `(req, res, next)`. */
export interface HttpMiddleware {
  (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void): void;
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

/**
 * The same endpoints as Express middleware; other paths go to `next()`.
 * Mount it before any JSON body parser: the signature covers the raw body.
 * Behind `express.raw({ type: 'application/json' })` it uses the Buffer body.
 * Express is not a dependency: the middleware is a plain function.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { definePlugin } from '@host/plugin-sdk-v2';
 * import { httpRouter } from '@host/plugin-sdk-v2/http';
 *
 * const plugin = definePlugin({
 *   manifest: { pluginId: 'com.example.echo', name: 'Echo', version: '1.0.0', author: 'Example', protocolVersion: 2 },
 *   async onMessage(ctx) {
 *     await ctx.reply('pong');
 *   },
 * });
 *
 * const app = express();
 * app.use('/bot', httpRouter(plugin, { secret: process.env.HOST_PLUGIN_SECRET ?? '' })); // base URL: https://example.com/bot
 * app.use(express.json()); // your other routes
 * app.listen(8080);
 * ```
 */
export function httpRouter(plugin: Plugin, options: HttpPluginOptions): HttpMiddleware {
  const server = new HttpPluginServer(plugin, options);
  const middleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void): void => {
    const route = routeOf(req.url);
    if (!route) return next();
    const body = (req as IncomingMessage & { body?: unknown }).body;
    if (Buffer.isBuffer(body)) return void server.handle(req, res, route, body);
    if (route !== 'manifest' && req.readableEnded) {
      return sendError(
        res,
        'http.body_consumed',
        'a body parser read the request before httpRouter(); mount httpRouter() before express.json(), or use express.raw({ type: "application/json" }) for its paths, because the signature covers the raw body',
      );
    }
    void server.handle(req, res, route);
  };
  return Object.assign(middleware, { ready: server.ready, close: () => server.close() });
}
