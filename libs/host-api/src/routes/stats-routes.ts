import { ADMIN_ROUTES, type PluginHealth, type StatsAlert, type StatsBucket, type StatsResponse } from '@host/admin-api';
import type { RegistryStore } from '@host/host-core';
import { implementRoute, type RouteDef } from '@host/host-routes';
import type { PendingUpdates } from '@host/host-installer';
import { listPlugins, type ViewDeps } from '../plugin-view';

/** One plugin's deliveries over the last 5 minutes and its last failure (the host's StatsRing answers it). */
export interface PluginRecent {
  deliveries: number;
  failed: number;
  expired: number;
  lastError: { code: string; message: string; at: string } | null;
}

/** The dashboard's series kept where the event log is followed (libs/host-metrics' StatsRing). */
export interface StatsSource {
  series(): StatsBucket[];
  plugin(pluginId: string): PluginRecent;
}

export interface StatsRouteDeps extends ViewDeps {
  store: RegistryStore;
  stats: StatsSource;
  /** Uploaded updates waiting for confirmation (the installer's). */
  pending: Pick<PendingUpdates, 'list'>;
}

/** The alerts one plugin raises now, in the order the dashboard shows them. */
function alertsOf(p: PluginHealth, reason: string | undefined): StatsAlert[] {
  const out: StatsAlert[] = [];
  if (p.state === 'failed') out.push({ kind: 'pluginFailed', pluginId: p.pluginId, ...(reason ? { detail: reason } : {}) });
  if (p.health === 'unreachable')
    out.push({ kind: 'circuitOpen', pluginId: p.pluginId, ...(p.lastError ? { detail: p.lastError.code } : {}) });
  if (p.expired > 0) out.push({ kind: 'eventsExpiring', pluginId: p.pluginId, detail: String(p.expired) });
  return out;
}

/** GET /api/stats: the series, each plugin's health and the alerts, answered from state kept elsewhere. */
export function statsRoutes(deps: StatsRouteDeps): RouteDef<unknown, unknown>[] {
  return [
    implementRoute(ADMIN_ROUTES.stats, async () => {
      const [records, pending] = await Promise.all([deps.store.list(), deps.pending.list()]);
      const summaries = await listPlugins(deps, records);
      const alerts: StatsAlert[] = [];
      const plugins = summaries.map((s): PluginHealth => {
        const recent = deps.stats.plugin(s.pluginId);
        const health: PluginHealth = {
          pluginId: s.pluginId,
          ...(s.name ? { name: s.name } : {}),
          transport: s.transport,
          state: s.state,
          ...(s.runtime?.health ? { health: s.runtime.health } : {}),
          deliveries: recent.deliveries,
          failed: recent.failed,
          expired: recent.expired,
          errorRate: recent.deliveries > 0 ? (recent.failed + recent.expired) / recent.deliveries : null,
          queue: s.queue ?? null,
          lastError: recent.lastError,
        };
        alerts.push(...alertsOf(health, s.runtime?.stateReason ?? s.runtime?.lastError));
        return health;
      });
      for (const u of pending.sort((a, b) => a.createdAt.localeCompare(b.createdAt)))
        alerts.push({ kind: 'updatePending', pluginId: u.pluginId, pendingUpdateId: u.id, detail: u.incoming.version });
      const body: StatsResponse = {
        generatedAt: new Date().toISOString(),
        bucketSeconds: 10,
        buckets: deps.stats.series(),
        plugins,
        alerts,
      };
      return { body };
    }),
  ];
}
