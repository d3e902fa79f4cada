import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ADMIN_ROUTES, DoctorReportSchema, type DoctorReport } from '@host/admin-api';
import { HostError, type HostPaths, type RegistryStore } from '@host/host-core';
import { implementRoute, type RouteDef } from '@host/host-routes';
import type { PluginInstaller } from '@host/host-installer';
import {
  checkInstalled,
  checkInstalledInSeparateProcess,
  reapDoctorLeftovers,
  type InstalledPluginJob,
  type RunIsolation,
} from '@host/plugin-conformance';
import { PLUGIN_ID_PATTERN } from '@host/protocol';

export interface DoctorRouteDeps {
  paths: HostPaths;
  store: RegistryStore;
  installer: PluginInstaller;
  version?: string;
  /** The built worker script (doctor-worker.cjs beside the host's main): the suite then runs in a process of its own. */
  doctorWorker?: string;
  /** Longest time one run may take before it is ended with DOCTOR_RUN_TIMEOUT (default DOCTOR_RUN_TIMEOUT_MILLISECONDS). */
  doctorTimeoutMilliseconds?: number;
  /**
   * How the host isolates its stdio plugins: the suite's processes of a plugin run the same way, as the
   * plugin's uid in the same mode, with the same limits and network (none: as the host's user).
   */
  isolation?: DoctorIsolation;
}

/** The host's isolation of its plugins, for the doctor's runs (see RunIsolation). */
export interface DoctorIsolation extends Omit<RunIsolation, 'uid'> {
  /** The plugin's uid (the one its runs get), for own-user and sandbox. */
  uidOf?(pluginId: string): number;
}

/**
 * Longest time one conformance run may take. A conforming plugin needs seconds; one whose handlers never
 * complete or that floods its pipes would otherwise hold a doctor slot (and a core) for many minutes.
 */
export const DOCTOR_RUN_TIMEOUT_MILLISECONDS = 120_000;

/** Where doctor runs write down their plugin's process group while they run (one file per run). */
export function doctorProcessesDir(paths: HostPaths): string {
  return join(paths.stateDir, 'doctor-processes');
}

/**
 * Ends the plugin processes of doctor runs a host killed outright left behind (their process groups were
 * written down under doctorProcessesDir); call at start. Returns the group leaders' pids.
 */
export function reapDoctorProcesses(paths: HostPaths): number[] {
  return reapDoctorLeftovers(doctorProcessesDir(paths));
}

function doctorIsolation(i: DoctorIsolation, pluginId: string): RunIsolation {
  const { uidOf, ...rest } = i;
  return { ...rest, ...(uidOf && rest.settings.request !== 'same-user' ? { uid: uidOf(pluginId) } : {}) };
}

/** Conformance runs the host does at once; each starts a few short-lived plugin processes one after another. */
export const MAX_CONCURRENT_DOCTOR_RUNS = 2;

/** Where the last report of a plugin is kept: host state, never the plugin's own data folders. */
export function doctorReportFile(paths: HostPaths, pluginId: string): string {
  return join(paths.stateDir, 'doctor', `${pluginId}.json`);
}

/**
 * POST and GET /api/plugins/{pluginId}/doctor: the protocol's conformance
 * suite against an installed stdio plugin, on the operator's request only
 * (the installer executes nothing). The suite starts its own processes of the
 * installed package with temporary data, config and cache folders and no
 * stored settings, so the running instance and the plugin's data are never
 * touched; the installer's checks passed when the package was installed.
 * With `doctorWorker` the suite runs in a separate Node process.
 */
export function doctorRoutes(deps: DoctorRouteDeps): RouteDef<unknown, unknown>[] {
  const running = new Set<string>();

  const stdioRecord = async (pluginId: string) => {
    const record = PLUGIN_ID_PATTERN.test(pluginId) ? await deps.store.get(pluginId) : undefined;
    if (!record) throw new HostError('PLUGIN_NOT_FOUND', undefined, { pluginId });
    return record;
  };

  return [
    implementRoute(ADMIN_ROUTES.runDoctor, async ({ params, res }) => {
      const id = params['pluginId']!;
      const record = await stdioRecord(id);
      if (record.transport !== 'stdio-jsonrpc') {
        throw new HostError(
          'PLUGIN_STATE_CONFLICT',
          `${id} is an HTTP plugin; the conformance suite checks stdio plugins, whose processes the host runs. Check an HTTP service with its own tests.`,
          { pluginId: id },
        );
      }
      if (deps.installer.invalidPackages().some((i) => i.pluginId === id)) {
        throw new HostError('PLUGIN_STATE_CONFLICT', `The package of ${id} is invalid (state invalidManifest); reinstall it first.`, {
          pluginId: id,
        });
      }
      if (running.has(id))
        throw new HostError('PLUGIN_STATE_CONFLICT', `The conformance suite already runs for ${id}; wait for its answer.`, {
          pluginId: id,
        });
      if (running.size >= MAX_CONCURRENT_DOCTOR_RUNS) {
        throw new HostError(
          'PLUGIN_STATE_CONFLICT',
          `The conformance suite already runs for ${MAX_CONCURRENT_DOCTOR_RUNS} plugins; send the request again when one has answered.`,
          { pluginId: id, running: [...running] },
        );
      }
      running.add(id);
      // A run lives as long as its request: a client that goes away, or the time bound, ends it and its processes.
      const abort = new AbortController();
      const timeoutMs = deps.doctorTimeoutMilliseconds ?? DOCTOR_RUN_TIMEOUT_MILLISECONDS;
      const timer = setTimeout(
        () => abort.abort(new HostError('DOCTOR_RUN_TIMEOUT', undefined, { pluginId: id, timeoutSeconds: timeoutMs / 1000 })),
        timeoutMs,
      );
      const onClose = () => {
        if (!res.writableEnded) abort.abort(new Error(`the client of the conformance run of ${id} went away`));
      };
      res.once('close', onClose);
      const processRecordFile = join(doctorProcessesDir(deps.paths), `${randomUUID()}.json`);
      try {
        const packageDir = deps.paths.packageDir(id);
        const job: InstalledPluginJob = {
          packageDir,
          manifest: record.manifest,
          source: relative(deps.paths.dataDir, packageDir),
          installed: `installed ${record.installedAt} (package sha256 ${record.packageSha256.slice(0, 12)}...)`,
          hostVersion: deps.version ?? '0.0.0',
          processRecordFile,
          ...(deps.isolation ? { isolation: doctorIsolation(deps.isolation, id) } : {}),
        };
        const report: DoctorReport = deps.doctorWorker
          ? await checkInstalledInSeparateProcess(deps.doctorWorker, job, abort.signal)
          : await checkInstalled(job, abort.signal);
        const file = doctorReportFile(deps.paths, id);
        mkdirSync(join(file, '..'), { recursive: true });
        // Kept with the package it is about: after an update (or a reinstall) it no longer describes the plugin.
        writeFileSync(`${file}.tmp`, JSON.stringify({ packageSha256: record.packageSha256, report }));
        renameSync(`${file}.tmp`, file);
        return { body: { report } };
      } finally {
        clearTimeout(timer);
        res.off('close', onClose);
        running.delete(id);
        // The run's group is ended by now (an aborted worker's is ended, and its record removed, when it exits).
        rmSync(processRecordFile, { force: true });
      }
    }),
    implementRoute(ADMIN_ROUTES.lastDoctor, async ({ params }) => {
      const id = params['pluginId']!;
      const record = await stdioRecord(id);
      let report: DoctorReport | null = null;
      try {
        const stored = JSON.parse(readFileSync(doctorReportFile(deps.paths, id), 'utf8')) as { packageSha256?: unknown; report?: unknown };
        const parsed = DoctorReportSchema.safeParse(stored.report);
        // A report of another package (before an update or a reinstall) says nothing about this one.
        const current = record.transport === 'stdio-jsonrpc' && stored.packageSha256 === record.packageSha256;
        report = parsed.success && current ? parsed.data : null;
      } catch {
        report = null; // never run (or unreadable): nothing to show
      }
      return { body: { report } };
    }),
  ];
}
