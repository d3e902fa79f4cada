import { HostError, type PluginLock, type PluginLogStore, type PluginRecord, type RegistryStore, type SettingsStore } from '@host/host-core';
import { PLUGIN_ID_PATTERN } from '@host/protocol';
import { relative } from 'node:path';
import { pluginDetail, listPlugins, type ViewDeps } from '../plugin-view';
import { defineRoute, type RouteDef } from '../route-table';
import {
  DataDeletedResponseSchema,
  LogsQuerySchema,
  LogsResponseSchema,
  PluginListResponseSchema,
  PluginResponseSchema,
  SettingsPutBodySchema,
  SettingsResponseSchema,
  UninstallResponseSchema,
} from '../schemas';
import { applySettingsChanges, publicSettings } from '../settings';

export interface PluginRouteDeps extends ViewDeps {
  store: RegistryStore;
  /** The host-wide per-plugin lock, shared with the installer and the HTTP registry. */
  locks: PluginLock;
  settings: SettingsStore;
  logs?: PluginLogStore;
}

const PLUGIN_PARAM = { pluginId: 'The plugin id, for example com.example.echo.' };

async function recordOf(deps: PluginRouteDeps, pluginId: string): Promise<PluginRecord> {
  const record = PLUGIN_ID_PATTERN.test(pluginId) ? await deps.store.get(pluginId) : undefined;
  if (!record) throw new HostError('PLUGIN_NOT_FOUND', undefined, { pluginId });
  return record;
}

/** A plugin the runtime may act on: registered, with a valid package. */
async function runnable(deps: PluginRouteDeps, pluginId: string): Promise<PluginRecord> {
  const record = await recordOf(deps, pluginId);
  if (deps.installer.invalidPackages().some((i) => i.pluginId === pluginId)) {
    throw new HostError('PLUGIN_STATE_CONFLICT', `The package of ${pluginId} is invalid (state invalidManifest); reinstall it first.`, { pluginId });
  }
  return record;
}

export function pluginRoutes(deps: PluginRouteDeps): RouteDef<unknown, unknown>[] {
  const detail = async (pluginId: string) => ({ plugin: await pluginDetail(deps, pluginId, await deps.store.get(pluginId)) });
  // Only `enabled` changes, on the record as stored now: whatever changed it
  // while the runtime acted (an update, say) stays.
  const setEnabled = async (pluginId: string, enabled: boolean) => {
    const stored = await deps.store.update(pluginId, (current) => (current.enabled === enabled ? undefined : { ...current, enabled }));
    if (!stored) {
      throw new HostError('PLUGIN_NOT_FOUND', `${pluginId} was removed from the registry while it was being ${enabled ? 'started' : 'stopped'}. List plugins with GET /api/plugins.`, { pluginId });
    }
  };
  const lifecycle = (action: 'start' | 'stop' | 'restart'): RouteDef<unknown, unknown> =>
    defineRoute({
      method: 'post',
      path: `/plugins/{pluginId}/${action}`,
      summary: `${action[0]!.toUpperCase()}${action.slice(1)} a plugin`,
      description:
        action === 'stop'
          ? 'Stops the process (stdio) or disables delivery (HTTP); an operator stop never triggers a restart, and the plugin is not started with the host.'
          : 'Starts the process (stdio) or enables delivery (HTTP); the plugin is then started whenever the host starts.',
      tags: ['plugins'],
      params: PLUGIN_PARAM,
      responses: { 200: { description: 'The plugin after the action.', schema: PluginResponseSchema } },
      errors: ['PLUGIN_NOT_FOUND', 'PLUGIN_STATE_CONFLICT', 'RUNTIME_UNAVAILABLE'],
      handler: async ({ params }) => {
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
              throw new HostError('PLUGIN_STATE_CONFLICT', `${id} was removed and registered again with another transport while this request waited; send the request again.`, { pluginId: id });
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
      },
    });

  return [
    defineRoute({
      method: 'get',
      path: '/plugins',
      summary: 'List plugins',
      description: 'Registered stdio and HTTP plugins, plus packages found on disk whose manifest does not validate (state invalidManifest).',
      tags: ['plugins'],
      responses: { 200: { description: 'Every plugin.', schema: PluginListResponseSchema } },
      handler: async () => ({ body: { plugins: await listPlugins(deps, await deps.store.list()) } }),
    }),
    defineRoute({
      method: 'get',
      path: '/plugins/{pluginId}',
      summary: 'One plugin with its manifest, runtime details, backups and locations',
      tags: ['plugins'],
      params: PLUGIN_PARAM,
      responses: { 200: { description: 'The plugin.', schema: PluginResponseSchema } },
      errors: ['PLUGIN_NOT_FOUND'],
      handler: async ({ params }) => {
        const id = params['pluginId']!;
        if (!PLUGIN_ID_PATTERN.test(id)) throw new HostError('PLUGIN_NOT_FOUND', undefined, { pluginId: id });
        return { body: await detail(id) };
      },
    }),
    lifecycle('start'),
    lifecycle('stop'),
    lifecycle('restart'),
    defineRoute({
      method: 'delete',
      path: '/plugins/{pluginId}',
      summary: 'Uninstall a plugin (keeps its data and config)',
      description:
        'Stops a running stdio plugin, moves its package folder to backups/<pluginId>/ and removes it from the registry. HTTP plugins are unregistered. Data and config stay until DELETE /api/plugins/{pluginId}/data.',
      tags: ['plugins'],
      params: PLUGIN_PARAM,
      responses: { 200: { description: 'Uninstalled.', schema: UninstallResponseSchema } },
      errors: ['PLUGIN_NOT_FOUND', 'RUNTIME_UNAVAILABLE'],
      handler: async ({ params }) => {
        const id = params['pluginId']!;
        if (!PLUGIN_ID_PATTERN.test(id)) throw new HostError('PLUGIN_NOT_FOUND', undefined, { pluginId: id });
        const record = await deps.store.get(id);
        if (record?.transport === 'http' && deps.http) {
          await deps.http.remove(id);
          return { body: { uninstalled: id, backup: null } };
        }
        const { backup } = await deps.installer.uninstall(id);
        return { body: { uninstalled: id, backup: backup && relative(deps.paths.dataDir, backup) } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/plugins/{pluginId}/data',
      summary: "Delete a plugin's data, config and cache",
      description: 'The only action that deletes plugin data. Refused while the plugin runs. Works after uninstall too.',
      tags: ['plugins'],
      params: PLUGIN_PARAM,
      responses: { 200: { description: 'Deleted.', schema: DataDeletedResponseSchema } },
      errors: ['PLUGIN_NOT_FOUND', 'PLUGIN_STATE_CONFLICT'],
      handler: async ({ params }) => {
        const id = params['pluginId']!;
        if (!PLUGIN_ID_PATTERN.test(id)) throw new HostError('PLUGIN_NOT_FOUND', undefined, { pluginId: id });
        await deps.installer.deleteData(id);
        await deps.settings.delete(id);
        return { body: { deleted: id } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/plugins/{pluginId}/logs',
      summary: "Tail of a plugin's log",
      tags: ['plugins'],
      params: PLUGIN_PARAM,
      query: LogsQuerySchema,
      responses: { 200: { description: 'The most recent lines, oldest first.', schema: LogsResponseSchema } },
      errors: ['PLUGIN_NOT_FOUND', 'BAD_REQUEST', 'RUNTIME_UNAVAILABLE'],
      handler: async ({ params, query }) => {
        const id = params['pluginId']!;
        const known = PLUGIN_ID_PATTERN.test(id) && ((await deps.store.get(id)) || deps.installer.invalidPackages().some((i) => i.pluginId === id));
        if (!known) throw new HostError('PLUGIN_NOT_FOUND', undefined, { pluginId: id });
        if (!deps.logs) throw new HostError('RUNTIME_UNAVAILABLE', 'Plugin logs are not available in this host build.');
        return { body: { lines: await deps.logs.tail(id, query.tail) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/plugins/{pluginId}/settings',
      summary: "A plugin's settings form and current values",
      description: 'Values are checked against settings.configSchema of the manifest. Secret values are never returned, only whether one is set.',
      tags: ['settings'],
      params: PLUGIN_PARAM,
      responses: { 200: { description: 'Schema and values.', schema: SettingsResponseSchema } },
      errors: ['PLUGIN_NOT_FOUND'],
      handler: async ({ params }) => {
        const record = await recordOf(deps, params['pluginId']!);
        return { body: { schema: record.manifest.settings?.configSchema ?? {}, values: publicSettings(record, await deps.settings.get(record.pluginId)) } };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/plugins/{pluginId}/settings',
      summary: "Change a plugin's settings",
      description:
        'Stored by the settings store, by default in plugin-data/<pluginId>/config/settings.json (kept across updates and uninstall). A blank or null secret keeps the stored secret; null clears other fields; omitted fields keep their value.',
      tags: ['settings'],
      params: PLUGIN_PARAM,
      body: SettingsPutBodySchema,
      responses: { 200: { description: 'Schema and the new values.', schema: SettingsResponseSchema } },
      errors: ['PLUGIN_NOT_FOUND', 'BAD_REQUEST', 'SETTINGS_INVALID'],
      handler: async ({ params, body }) => {
        const record = await recordOf(deps, params['pluginId']!);
        const stored = await deps.settings.update(record.pluginId, (current) => applySettingsChanges(record, current, body.values));
        return { body: { schema: record.manifest.settings?.configSchema ?? {}, values: publicSettings(record, stored) } };
      },
    }),
  ] as RouteDef<unknown, unknown>[];
}
