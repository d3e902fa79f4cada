import {
  HostError,
  type HostPaths,
  type HttpPluginRecord,
  type InvalidPackage,
  type PluginRecord,
  type PluginRuntime,
  type RuntimeStatus,
} from '@host/host-core';
import { findCommandConflicts } from '@host/host-dispatch';
import type { PluginInstaller } from '@host/host-installer';
import { relative } from 'node:path';
import type { PluginDetail, PluginQueueView, PluginSummary } from '@host/admin-api';

/** What the plugins routes need to know about HTTP plugins (the HTTP registry implements it). */
export interface HttpPluginControl {
  enable(pluginId: string): Promise<unknown>;
  disable(pluginId: string): Promise<unknown>;
  remove(pluginId: string): Promise<void>;
  status(record: HttpPluginRecord): RuntimeStatus;
}

export interface ViewDeps {
  paths: HostPaths;
  runtime: PluginRuntime;
  installer: PluginInstaller;
  http?: HttpPluginControl;
  /** Each plugin's event queue on this host (the dispatcher's), by pluginId. */
  queues?: () => ReadonlyMap<string, PluginQueueView>;
}

function runtimeStatus(deps: ViewDeps, record: PluginRecord): RuntimeStatus | undefined {
  if (record.transport === 'http') return deps.http?.status(record) ?? { state: record.enabled ? 'running' : 'stopped', crashCount: 0 };
  return deps.runtime.status(record.pluginId);
}

/** The commands of `record` that another registered plugin answers too (see findCommandConflicts). */
export function commandConflictsOf(record: PluginRecord, records: readonly PluginRecord[]): PluginSummary['commandConflicts'] {
  const owner = (r: PluginRecord) => ({ pluginId: r.pluginId, commands: r.manifest.commands });
  const conflicts = findCommandConflicts(owner(record), records.map(owner));
  return conflicts.length > 0 ? conflicts : undefined;
}

/** `records`: every registered plugin, to report command conflicts with. */
export function summarizeRecord(
  deps: ViewDeps,
  record: PluginRecord,
  invalid?: InvalidPackage,
  records: readonly PluginRecord[] = [],
): PluginSummary {
  const m = record.manifest;
  const status = runtimeStatus(deps, record);
  const commandConflicts = commandConflictsOf(record, records);
  const queue = deps.queues?.().get(record.pluginId);
  return {
    pluginId: record.pluginId,
    name: m.name,
    version: m.version,
    author: m.author,
    ...(m.description ? { description: m.description } : {}),
    transport: record.transport,
    state: invalid ? 'invalidManifest' : (status?.state ?? 'installed'),
    enabled: record.enabled,
    installedAt: record.installedAt,
    updatedAt: record.updatedAt,
    ...(invalid ? { issues: invalid.issues } : {}),
    ...(commandConflicts ? { commandConflicts } : {}),
    ...(status ? { runtime: status } : {}),
    ...(queue ? { queue } : {}),
    permissions: [...m.permissions],
    commands: m.commands.map((c) => ({
      name: c.name,
      prefixes: [...c.prefixes],
      ...(c.aliases?.length ? { aliases: [...c.aliases] } : {}),
      ...(c.description ? { description: c.description } : {}),
    })),
  };
}

function summarizeInvalid(invalid: InvalidPackage): PluginSummary {
  return { pluginId: invalid.pluginId, transport: 'stdio-jsonrpc', state: 'invalidManifest', enabled: false, issues: invalid.issues };
}

/** Registered plugins and invalid packages found on disk, by pluginId. */
export async function listPlugins(deps: ViewDeps, records: PluginRecord[]): Promise<PluginSummary[]> {
  const invalid = new Map(deps.installer.invalidPackages().map((i) => [i.pluginId, i]));
  const out = records.map((r) => summarizeRecord(deps, r, invalid.get(r.pluginId), records));
  for (const i of invalid.values()) if (!records.some((r) => r.pluginId === i.pluginId)) out.push(summarizeInvalid(i));
  return out.sort((a, b) => a.pluginId.localeCompare(b.pluginId));
}

/** `records`: every registered plugin, to report command conflicts with. */
export async function pluginDetail(
  deps: ViewDeps,
  pluginId: string,
  record: PluginRecord | undefined,
  records: readonly PluginRecord[] = [],
): Promise<PluginDetail> {
  const invalid = deps.installer.invalidPackages().find((i) => i.pluginId === pluginId);
  if (!record && !invalid) throw new HostError('PLUGIN_NOT_FOUND', undefined, { pluginId });
  const backups = (await deps.installer.backups(pluginId)).map(({ name, version, createdAt }) => ({ name, version, createdAt }));
  const rel = (p: string) => relative(deps.paths.dataDir, p);
  const locations = {
    package: rel(deps.paths.packageDir(pluginId)),
    data: rel(deps.paths.dataDirOf(pluginId)),
    config: rel(deps.paths.configDirOf(pluginId)),
    cache: rel(deps.paths.cacheDirOf(pluginId)),
    logs: rel(deps.paths.logDirOf(pluginId)),
  };
  if (!record) return { ...summarizeInvalid(invalid!), backups, locations };
  const status = runtimeStatus(deps, record);
  return {
    ...summarizeRecord(deps, record, invalid, records),
    manifest: record.manifest,
    ...(status ? { runtime: status } : {}),
    ...(record.transport === 'stdio-jsonrpc' ? { packageSha256: record.packageSha256, locations } : { baseUrl: record.baseUrl }),
    backups,
  };
}
