import type { OutboundRecord } from '@host/host-core';
import { AuthThrottle, requireAdmin } from '@host/host-api';
import type { Dispatcher } from '@host/host-dispatch';
import type { HttpPluginRegistry } from '@host/host-http';
import { HostMetrics, logDeliveryFailures, StatsRing, tapEventLog } from '@host/host-metrics';
import { Router, type RequestHandler } from 'express';
import { createServer, type Server } from 'node:http';
import type { HostLog } from './host-log';

/**
 * Connects the metrics to the parts that produce their facts (the event log, queues, refusals, HTTP
 * circuits), and logs failed deliveries with their plugin and event ids. Metrics are optional; the
 * failure log and the admin app's dashboard series (GET /api/stats, fed by the same tap) are not.
 */
export function observeHost(o: {
  dispatcher: Dispatcher;
  httpPlugins: HttpPluginRegistry;
  metrics?: HostMetrics;
  log: HostLog;
}): StatsRing {
  const { dispatcher, httpPlugins, metrics } = o;
  const stats = new StatsRing();
  logDeliveryFailures(dispatcher.events, (message, fields) => o.log('warn', message, { component: 'dispatch', ...fields }));
  if (!metrics) {
    tapEventLog(dispatcher.events, undefined, stats);
    return stats;
  }
  metrics.observeEventLog(dispatcher.events, stats);
  metrics.attach({
    queues: () => dispatcher.queueStats(),
    refusals: () => dispatcher.refusals,
    circuits: () => httpPlugins.liveEndpoints().map((e) => ({ pluginId: e.pluginId, ...e.health() })),
  });
  return stats;
}

/**
 * The provider of an outbound message, for the metrics: its event's source for a reply, else the
 * provider of the bot account it names.
 */
export function providerOf(dispatcher: Dispatcher, out: OutboundRecord): string {
  const source = out.eventId === undefined ? undefined : dispatcher.events.get(out.eventId)?.source;
  if (source) return source;
  const byAccount = out.target.botAccountId === undefined ? undefined : dispatcher.providers.forBotAccount(out.target.botAccountId)?.id;
  return byAccount ?? 'unknown';
}

/** Serves the exposition; a failed collection answers 500 with the reason, as a scraper shows it. */
function exposition(metrics: HostMetrics): RequestHandler {
  return (_req, res) => {
    metrics.render().then(
      ({ contentType, body }) => res.type(contentType).send(body),
      (e: Error) => res.status(500).type('text/plain').send(`could not collect the metrics: ${e.message}\n`),
    );
  };
}

/** GET /metrics on the main listener, behind the admin token as a bearer token (Prometheus' `authorization`). */
export function metricsRouter(metrics: HostMetrics, adminTokenHash: string, throttle: AuthThrottle): RequestHandler {
  const router = Router();
  router.get('/metrics', requireAdmin(adminTokenHash, undefined, throttle), exposition(metrics));
  return router;
}

/**
 * A listener of its own for GET /metrics, without a token (HOST_METRICS_BIND): meant for a private
 * interface that only the scraper reaches. Everything else there is 404.
 */
export function createMetricsServer(metrics: HostMetrics): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Only GET /metrics is served here.\n');
      return;
    }
    metrics.render().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(req.method === 'HEAD' ? undefined : body),
      (e: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`could not collect the metrics: ${e.message}\n`),
    );
  });
}
