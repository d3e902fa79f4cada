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
  /**
   * The longest the whole run may take. When it runs out, the scenario being played ends as an aborted `signal`
   * ends it, and the report lists that scenario and the ones after it as not played and does not pass. Default:
   * no bound but the deadlines of each step (a plugin whose handlers never complete makes that minutes).
   */
  timeoutMilliseconds?: number;
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
    const timedOut = await playWithinBound(prepared.packageDir, prepared.manifest, outcomes, options);
    const m = prepared.manifest;
    const report = buildReport(outcomes, { pluginId: m.pluginId, name: m.name, version: m.version }, source, startedAt);
    return timedOut ? { ...report, passed: false } : report;
  } finally {
    await prepared.cleanup();
  }
}

/** Rejects with the signal's reason when it aborts. */
export function abortedBy(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/** Why the run stopped, as a reason of the signal that stops it: the run's own time bound. */
class RunTimeBound extends Error {
  constructor(readonly milliseconds: number) {
    super(`the run stopped at its time bound of ${milliseconds / 1000} s`);
  }
}

/**
 * Plays the scenarios within `options.timeoutMilliseconds`; true when the bound ran out, with every check that
 * no scenario played named as not played. Another abort (the caller's signal) still rejects.
 */
async function playWithinBound(
  packageDir: string,
  manifest: StdioManifest,
  outcomes: Outcomes,
  options: ConformanceOptions,
): Promise<boolean> {
  if (options.timeoutMilliseconds === undefined) {
    await playScenarios(packageDir, manifest, outcomes, options);
    return false;
  }
  const bound = new AbortController();
  const timer = setTimeout(() => bound.abort(new RunTimeBound(options.timeoutMilliseconds!)), options.timeoutMilliseconds);
  const signal = options.signal ? AbortSignal.any([options.signal, bound.signal]) : bound.signal;
  // A step may wait for its own deadline after its process was ended: the run's answer does not wait with it.
  const played = playScenarios(packageDir, manifest, outcomes, { ...options, signal });
  played.catch(() => undefined);
  try {
    await Promise.race([played, abortedBy(signal)]);
    return false;
  } catch (e) {
    if (!(e instanceof RunTimeBound)) throw e;
    const why = `not played: ${e.message} (scenarios not played to their end: ${outcomes.notPlayed.join(', ')})`;
    const decided = new Set(outcomes.results().flatMap((c) => (c.status === 'skip' ? [] : [c.id])));
    for (const c of CONFORMANCE_SUITE.checks) if (!decided.has(c.id)) outcomes.skip(c.id, why);
    return true;
  } finally {
    clearTimeout(timer);
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
  // What a scenario saw counts only when it played to its end: one ended by the signal stays listed as not played.
  outcomes.notPlayed.push(...scenarios.map((s) => s.id));
  const scratch = await mkdtemp(join(tmpdir(), 'host-doctor-'));
  try {
    for (const scenario of scenarios) {
      options.signal?.throwIfAborted();
      const t0 = performance.now();
      const seen = new Outcomes();
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
        seen,
      ).play();
      options.signal?.throwIfAborted();
      outcomes.addAll(seen);
      outcomes.notPlayed.splice(outcomes.notPlayed.indexOf(scenario.id), 1);
      if (process.env['CONFORMANCE_DEBUG']) process.stderr.write(`${scenario.id}: ${Math.round(performance.now() - t0)} ms\n`);
    }
    options.signal?.throwIfAborted();
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
