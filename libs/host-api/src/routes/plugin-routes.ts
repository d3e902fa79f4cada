import {
  HostError,
  type PluginLock,
  type PluginLogStore,
  type PluginRecord,
  type RegistryStore,
  type SettingsDelivery,
  type SettingsStore,
} from '@host/host-core';
import { PLUGIN_ID_PATTERN } from '@host/protocol';
import { relative } from 'node:path';
import { ADMIN_ROUTES } from '@host/admin-api';
import { pluginDetail, listPlugins, type ViewDeps } from '../plugin-view';
import type { LogLine } from '@host/host-core';
import { implementRoute, type RouteDef } from '@host/host-routes';
import { SseStream } from '@host/host-console';
import { FollowableLogStore } from '../log-followers';
import { applySettingsChanges, publicSettings, sameValues, type StoredSettings } from '../settings';

export interface PluginRouteDeps extends ViewDeps {
  store: RegistryStore;
  /** The host-wide per-plugin lock, shared with the installer and the HTTP registry. */
  locks: PluginLock;
  settings: SettingsStore;
  logs?: PluginLogStore;
}

async function recordOf(deps: PluginRouteDeps, pluginId: string): Promise<PluginRecord> {
  const record = PLUGIN_ID_PATTERN.test(pluginId) ? await deps.store.get(pluginId) : undefined;
  if (!record) throw new HostError('PLUGIN_NOT_FOUND', undefined, { pluginId });
  return record;
}

/** A plugin the runtime may act on: registered, with a valid package. */
async function runnable(deps: PluginRouteDeps, pluginId: string): Promise<PluginRecord> {
  const record = await recordOf(deps, pluginId);
  if (deps.installer.invalidPackages().some((i) => i.pluginId === pluginId)) {
    throw new HostError('PLUGIN_STATE_CONFLICT', `The package of ${pluginId} is invalid (state invalidManifest); reinstall it first.`, {
      pluginId,
    });
  }
  return record;
}

export function pluginRoutes(deps: PluginRouteDeps): RouteDef<unknown, unknown>[] {
  /** What the plugin sees of stored settings (docs/protocol/v2.md 2.2). */
  const deliverSettings = async (record: PluginRecord): Promise<SettingsDelivery> => {
    const id = record.pluginId;
    if (record.transport === 'http') {
      return {
        status: 'notSent',
        message: `${id} is an HTTP plugin: the host stores its settings for this form only and does not send them; configure the service itself.`,
      };
    }
    if (deps.runtime.applySettings) return deps.runtime.applySettings(id);
    return deps.runtime.isRunning(id)
      ? { status: 'restartRequired', message: `Restart ${id} (POST /api/plugins/${id}/restart) to apply the new settings.` }
      : { status: 'nextStart', message: `${id} is not running; it gets the new settings when it starts.` };
  };

  const detail = async (pluginId: string) => ({
    plugin: await pluginDetail(deps, pluginId, await deps.store.get(pluginId), await deps.store.list()),
  });
  // Only `enabled` changes, on the record as stored now: whatever changed it
  // while the runtime acted (an update, say) stays.
  const setEnabled = async (pluginId: string, enabled: boolean) => {
    const stored = await deps.store.update(pluginId, (current) => (current.enabled === enabled ? undefined : { ...current, enabled }));
    if (!stored) {
      throw new HostError(
        'PLUGIN_NOT_FOUND',
        `${pluginId} was removed from the registry while it was being ${enabled ? 'started' : 'stopped'}. List plugins with GET /api/plugins.`,
        { pluginId },
      );
    }
  };
  const lifecycle = (action: 'start' | 'stop' | 'restart'): RouteDef<unknown, unknown> =>
    implementRoute(ADMIN_ROUTES[`${action}Plugin`], async ({ params }) => {
      const record = await runnable(deps, params['pluginId']!);
      const id = record.pluginId;
      const on = action !== 'stop';
      if (record.transport === 'http' && deps.http) {
        // The HTTP registry holds the plugin's lock itself and checks the record again.
        await (on ? deps.http.enable(id) : deps.http.disable(id));
      } else {
        await deps.locks.run(id, async () => {
          // Again under the lock: an uninstall or a registration of this id may have come first.
          const current = await runnable(deps, id);
          if (current.transport !== record.transport) {
            throw new HostError(
              'PLUGIN_STATE_CONFLICT',
              `${id} was removed and registered again with another transport while this request waited; send the request again.`,
              { pluginId: id },
            );
          }
          if (current.transport === 'stdio-jsonrpc') {
            if (action === 'start') await deps.runtime.start(id);
            else if (action === 'stop') await deps.runtime.stop(id, 'operator');
            else await deps.runtime.restart(id);
          }
          await setEnabled(id, on);
        });
      }
      return { body: await detail(id) };
    });

  return [
    implementRoute(ADMIN_ROUTES.listPlugins, async () => ({ body: { plugins: await listPlugins(deps, await deps.store.list()) } })),
    implementRoute(ADMIN_ROUTES.getPlugin, async ({ params }) => {
      const id = params['pluginId']!;
      if (!PLUGIN_ID_PATTERN.test(id)) throw new HostError('PLUGIN_NOT_FOUND', undefined, { pluginId: id });
      return { body: await detail(id) };
    }),
    lifecycle('start'),
    lifecycle('stop'),
    lifecycle('restart'),
    implementRoute(ADMIN_ROUTES.uninstallPlugin, async ({ params }) => {
      const id = params['pluginId']!;
      if (!PLUGIN_ID_PATTERN.test(id)) throw new HostError('PLUGIN_NOT_FOUND', undefined, { pluginId: id });
      const record = await deps.store.get(id);
      if (record?.transport === 'http' && deps.http) {
        await deps.http.remove(id);
        return { body: { uninstalled: id, backup: null } };
      }
      const { backup } = await deps.installer.uninstall(id);
      return { body: { uninstalled: id, backup: backup && relative(deps.paths.dataDir, backup) } };
    }),
    implementRoute(ADMIN_ROUTES.deletePluginData, async ({ params }) => {
      const id = params['pluginId']!;
      if (!PLUGIN_ID_PATTERN.test(id)) throw new HostError('PLUGIN_NOT_FOUND', undefined, { pluginId: id });
      await deps.installer.deleteData(id);
      await deps.settings.delete(id);
      return { body: { deleted: id } };
    }),
    implementRoute(ADMIN_ROUTES.followPluginLogs, async ({ params, query, res }) => {
      const id = params['pluginId']!;
      const known =
        PLUGIN_ID_PATTERN.test(id) && ((await deps.store.get(id)) || deps.installer.invalidPackages().some((i) => i.pluginId === id));
      if (!known) throw new HostError('PLUGIN_NOT_FOUND', undefined, { pluginId: id });
      const logs = deps.logs;
      if (!(logs instanceof FollowableLogStore))
        throw new HostError('RUNTIME_UNAVAILABLE', 'Following plugin logs is not available in this host build.');
      // Lines written while the tail is read wait here (bounded), then follow it without repeats.
      const early: LogLine[] = [];
      const following = { live: false };
      const stream = new SseStream(res, { heartbeatMilliseconds: 15_000 });
      const stop = logs.follow(
        id,
        (line) => {
          if (following.live) stream.send('line', line);
          else if (early.length < 1000) early.push(line);
        },
        () => res.destroy(),
      );
      stream.onClose(stop);
      const tail = query.tail > 0 ? await logs.tail(id, query.tail) : [];
      const key = (l: LogLine) => `${l.at}\u0000${l.message}`;
      const seen = new Set(tail.map(key));
      for (const line of tail) stream.send('line', line);
      for (const line of early) if (!seen.has(key(line))) stream.send('line', line);
      following.live = true;
    }),
    implementRoute(ADMIN_ROUTES.pluginLogs, async ({ params, query }) => {
      const id = params['pluginId']!;
      const known =
        PLUGIN_ID_PATTERN.test(id) && ((await deps.store.get(id)) || deps.installer.invalidPackages().some((i) => i.pluginId === id));
      if (!known) throw new HostError('PLUGIN_NOT_FOUND', undefined, { pluginId: id });
      if (!deps.logs) throw new HostError('RUNTIME_UNAVAILABLE', 'Plugin logs are not available in this host build.');
      return { body: { lines: await deps.logs.tail(id, query.tail) } };
    }),
    implementRoute(ADMIN_ROUTES.getSettings, async ({ params }) => {
      const record = await recordOf(deps, params['pluginId']!);
      return {
        body: {
          schema: record.manifest.settings?.configSchema ?? {},
          values: publicSettings(record, await deps.settings.get(record.pluginId)),
        },
      };
    }),
    implementRoute(ADMIN_ROUTES.putSettings, async ({ params, body }) => {
      const record = await recordOf(deps, params['pluginId']!);
      let previous: StoredSettings = {};
      const stored = await deps.settings.update(record.pluginId, (current) => {
        previous = current;
        return applySettingsChanges(record, current, body.values);
      });
      const delivery = await deliverSettings(record);
      if (delivery.status === 'refused') {
        // The plugin keeps its old values (docs/protocol/v2.md 4.10), so the store does too: a refused value
        // must not reach the plugin at its next start. A change saved meanwhile by someone else stays.
        await deps.settings.update(record.pluginId, (current) => (sameValues(current, stored) ? previous : current));
        const reason = delivery.reason ?? 'it gave no reason';
        throw new HostError(
          'SETTINGS_REFUSED',
          `${record.pluginId} refused the new settings and keeps the previous ones: ${reason}. Correct the values and save again.`,
          { pluginId: record.pluginId, reason },
        );
      }
      return {
        body: {
          schema: record.manifest.settings?.configSchema ?? {},
          values: publicSettings(record, stored),
          delivery,
        },
      };
    }),
  ];
}
