import { statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONFORMANCE_SUITE, type ConformanceScenario, type StdioManifest } from '@host/protocol';
import { buildReport, INSTALLER_CHECK, Outcomes, type ConformanceReport } from './report';
import type { RunIsolation } from './plugin-run';
import { ScenarioRunner } from './scenario-runner';
import { prepareFolder, preparePackageFile, type PreparedPlugin } from './target';

export interface ConformanceOptions {
  /** The environment the host would start the plugin from (only its allow-listed variables reach the plugin). Default: this process's. */
  hostEnv?: NodeJS.ProcessEnv;
  /** Reported to the plugin as hostVersion. */
  hostVersion?: string;
  /** Settings values for host.initialize (never the plugin's real ones). Default: none, so the manifest's defaults apply in the plugin. */
  settings?: Record<string, unknown>;
  /** Only these scenarios (by id); default: the whole suite. */
  scenarios?: readonly string[];
  /** See RunOptions.processRecordFile. */
  processRecordFile?: string;
  /** Stops the suite: the scenario's process ends at once, and no further scenario starts (playScenarios rejects with the reason). */
  signal?: AbortSignal;
  /** Start the plugin isolated as the host starts it (see RunOptions.isolation); default: as this process's user. */
  isolation?: RunIsolation;
}

/**
 * Runs the conformance suite against a package (a .zip file) or a folder that
 * holds an unpacked package: the installer's checks first, then every
 * scenario against a fresh process started as the host starts it. The
 * plugin's data, config and cache folders are temporary and removed
 * afterwards. Never throws for anything the plugin does; the report says it.
 */
export async function runConformance(source: string, options: ConformanceOptions = {}): Promise<ConformanceReport> {
  const startedAt = new Date();
  let prepared: PreparedPlugin;
  try {
    prepared = statSync(source).isDirectory() ? prepareFolder(source) : await preparePackageFile(source);
  } catch (e) {
    prepared = {
      ok: false,
      code: 'INSTALL_MANIFEST_MISSING',
      message: `${source} cannot be read: ${(e as Error).message}`,
      manifest: null,
      cleanup: async () => undefined,
    };
  }
  const outcomes = new Outcomes();
  try {
    if (!prepared.ok) {
      outcomes.fail(INSTALLER_CHECK.id, `${prepared.code}: ${prepared.message}`);
      for (const c of CONFORMANCE_SUITE.checks) outcomes.skip(c.id, 'the installer would refuse the package, so it was not started');
      const m = prepared.manifest;
      return buildReport(
        outcomes,
        { pluginId: m?.pluginId ?? null, name: m?.name ?? null, version: m?.version ?? null },
        source,
        startedAt,
      );
    }
    outcomes.pass(INSTALLER_CHECK.id, prepared.seen);
    await playScenarios(prepared.packageDir, prepared.manifest, outcomes, options);
    const m = prepared.manifest;
    return buildReport(outcomes, { pluginId: m.pluginId, name: m.name, version: m.version }, source, startedAt);
  } finally {
    await prepared.cleanup();
  }
}

/**
 * Plays the scenarios against an already installed plugin folder (the host's
 * doctor endpoint uses this; the installer's checks passed at install time).
 */
export async function playScenarios(
  packageDir: string,
  manifest: StdioManifest,
  outcomes: Outcomes,
  options: ConformanceOptions = {},
): Promise<void> {
  const scenarios: ConformanceScenario[] = CONFORMANCE_SUITE.scenarios.filter(
    (s) => !options.scenarios || options.scenarios.includes(s.id),
  );
  const scratch = await mkdtemp(join(tmpdir(), 'host-doctor-'));
  try {
    for (const scenario of scenarios) {
      options.signal?.throwIfAborted();
      const t0 = performance.now();
      await new ScenarioRunner(
        scenario,
        {
          packageDir,
          manifest,
          scratchDir: join(scratch, scenario.id),
          hostEnv: options.hostEnv ?? process.env,
          hostVersion: options.hostVersion ?? 'conformance',
          settings: options.settings ?? {},
          ...(options.processRecordFile ? { processRecordFile: options.processRecordFile } : {}),
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.isolation ? { isolation: options.isolation } : {}),
        },
        outcomes,
      ).play();
      if (process.env['CONFORMANCE_DEBUG']) process.stderr.write(`${scenario.id}: ${Math.round(performance.now() - t0)} ms\n`);
    }
    options.signal?.throwIfAborted();
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
