import type { StdioManifest } from '@host/protocol';
import type { RunIsolation } from './plugin-run';
import { buildReport, INSTALLER_CHECK, Outcomes, type ConformanceReport } from './report';
import { abortedBy, playScenarios } from './suite';

/** What the host knows of an installed stdio plugin, to check it. */
export interface InstalledPluginJob {
  /** The installed package folder. */
  packageDir: string;
  manifest: StdioManifest;
  /** How the report names the package (the folder relative to the data folder). */
  source: string;
  /** What the installer recorded: shown as the installer check, which passed at install time. */
  installed: string;
  hostVersion: string;
  /** See RunOptions.processRecordFile. */
  processRecordFile?: string;
  /** The host's isolation of its plugins: the suite's processes run as the plugin's do (see RunOptions.isolation). */
  isolation?: RunIsolation;
}

/**
 * The suite against an installed plugin: the installer's checks passed when
 * it was installed, so only the scenarios run, with temporary folders and
 * no stored settings (the plugin's real data and secrets stay out of it).
 */
export async function checkInstalled(job: InstalledPluginJob, signal?: AbortSignal): Promise<ConformanceReport> {
  const startedAt = new Date();
  const outcomes = new Outcomes();
  outcomes.pass(INSTALLER_CHECK.id, job.installed);
  const played = playScenarios(job.packageDir, job.manifest, outcomes, {
    hostVersion: job.hostVersion,
    settings: {},
    ...(job.processRecordFile ? { processRecordFile: job.processRecordFile } : {}),
    ...(job.isolation ? { isolation: job.isolation } : {}),
    ...(signal ? { signal } : {}),
  });
  played.catch(() => undefined);
  // Aborted, the caller is answered at once; the scenario's process is ended meanwhile (ScenarioRunner).
  await (signal ? Promise.race([played, abortedBy(signal)]) : played);
  const m = job.manifest;
  return buildReport(outcomes, { pluginId: m.pluginId, name: m.name, version: m.version }, job.source, startedAt);
}
