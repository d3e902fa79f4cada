import { join } from 'node:path';
import {
  HostError,
  type HostPaths,
  type MediaStore,
  type OutboundSink,
  type PluginEndpoint,
  type PluginLogStore,
  type PluginRecord,
  type PluginRuntime,
  type RuntimeStatus,
  type SettingsDelivery,
  type StdioPluginRecord,
  type StopReason,
} from '@host/host-core';
import { ProcessGroups } from './process/process-groups';
import { LocalProcessRunner, type ProcessRunner } from './process/runner';
import { BootGuard } from './boot-guard';
import { FailureMemory } from './failure-memory';
import { ModuleContainment } from './process/module-containment';
import { IsolatingProcessRunner } from './isolation/isolating-runner';
import type { IsolationSupport } from './isolation/probe';
import type { IsolationSettings } from './isolation/settings';

/** Where the leaders of running plugin process groups are written down (see ProcessGroups). */
export const PLUGIN_PROCESSES_FILE = 'plugin-processes.json';
/** The folder of the data directory with what every plugin's user may read (the Node preload). */
export const RUNTIME_FOLDER = 'runtime';
import { DEFAULT_LIMITS, type RuntimeLimits } from './limits';
import { Supervisor } from './supervisor';
import { DEFAULT_TIMINGS, type RuntimeTimings } from './timings';

export interface StdioRuntimeOptions {
  paths: HostPaths;
  /** Where installed plugins are looked up at each start (a RegistryStore fits). */
  records: { get(pluginId: string): Promise<PluginRecord | undefined> };
  logs: PluginLogStore;
  /** Receives messages.reply and messages.send of every plugin. */
  sink: OutboundSink;
  /** Keeps the bytes plugins upload (media.upload); without it those calls are refused. */
  media?: MediaStore;
  /** Current settings values sent in host.initialize; `{}` when absent. */
  settings?: (pluginId: string) => Promise<Record<string, unknown>>;
  timings?: Partial<RuntimeTimings>;
  /** What the host buffers per plugin and how fast plugins may log (defaults: DEFAULT_LIMITS). */
  limits?: Partial<RuntimeLimits>;
  hostVersion?: string;
  /** Starts plugin processes; by default each in a local process group that dies with the host. */
  runner?: ProcessRunner;
  /**
   * Isolates each plugin as the machine allows (own user, sandbox, limits;
   * see IsolatingProcessRunner); without it plugins run as the host's user.
   */
  isolation?: { support: IsolationSupport; settings: IsolationSettings };
  /** The environment the allow-list is taken from; the host's own by default. */
  hostEnv?: NodeJS.ProcessEnv;
  /**
   * Whether Node plugins may load only files of their own package (see
   * ModuleContainment); true by default.
   */
  containModules?: boolean;
  onStatusChange?: (pluginId: string, status: RuntimeStatus) => void;
  now?: () => number;
}

const HAS_PROCESS = new Set<string>(['starting', 'running', 'stopping', 'restartPending']);

/**
 * The PluginRuntime of stdio plugins: one Supervisor per plugin that was ever
 * started. Its supervisors are also the dispatcher's endpoints.
 */
export class StdioPluginRuntime implements PluginRuntime {
  private readonly supervisors = new Map<string, Supervisor>();
  private readonly groups: ProcessGroups;
  private readonly runner: ProcessRunner;
  readonly timings: RuntimeTimings;
  readonly limits: RuntimeLimits;
  private readonly bootGuard: BootGuard;
  private readonly failures: FailureMemory;
  private readonly containment: ModuleContainment | null;

  constructor(private readonly o: StdioRuntimeOptions) {
    this.timings = { ...DEFAULT_TIMINGS, ...o.timings };
    this.limits = { ...DEFAULT_LIMITS, ...o.limits };
    this.failures = new FailureMemory(o.paths.stateDir);
    this.groups = new ProcessGroups(join(o.paths.stateDir, PLUGIN_PROCESSES_FILE));
    this.bootGuard = new BootGuard(o.paths.stateDir, {
      limit: this.limits.hostDeathsBeforeHoldBack,
      settleMilliseconds: this.timings.crashWindowMilliseconds,
    });
    this.runner =
      o.runner ??
      (o.isolation
        ? new IsolatingProcessRunner(this.groups, o.isolation.support, o.isolation.settings, o.paths.stateDir)
        : new LocalProcessRunner(this.groups));
    this.containment = o.containModules === false ? null : new ModuleContainment(join(o.paths.dataDir, RUNTIME_FOLDER));
  }

  async start(pluginId: string): Promise<RuntimeStatus> {
    if (!this.supervisors.has(pluginId) && !(await this.o.records.get(pluginId))) throw new HostError('PLUGIN_NOT_FOUND');
    return this.supervisor(pluginId).start();
  }

  /**
   * Starts a plugin as the host starts, unless the host died with it running
   * too often in a row (BootGuard): then it is `failed` with the reason.
   */
  /**
   * Ends plugin processes a previous host process left running (it was killed
   * outright, so its exit hook never ran); returns their pids. The host calls
   * it once at start, before starting plugins, so no plugin runs twice.
   */
  reapLeftovers(): number[] {
    return this.groups.reapLeftovers();
  }

  /**
   * The plugins the host is about to start with itself (enabled ones): until
   * each one's start begins, events routed to it wait for it instead of
   * finding no recipient. Call before the host takes events.
   */
  expectBoot(records: readonly StdioPluginRecord[]): void {
    for (const r of records) this.supervisor(r.pluginId).expectStart(r.manifest);
  }

  async startOnBoot(pluginId: string): Promise<RuntimeStatus> {
    if (!this.supervisors.has(pluginId) && !(await this.o.records.get(pluginId))) throw new HostError('PLUGIN_NOT_FOUND');
    const decision = this.limits.hostDeathsBeforeHoldBack > 0 ? await this.bootGuard.decide(pluginId) : { start: true as const };
    if (!decision.start) return this.supervisor(pluginId).holdBack(decision.reason);
    return this.supervisor(pluginId).start();
  }

  async stop(pluginId: string, reason: StopReason = 'operator'): Promise<RuntimeStatus> {
    if (reason === 'operator') this.failures.forget(pluginId);
    const s = this.supervisors.get(pluginId);
    if (s) return s.stop(reason);
    if (!(await this.o.records.get(pluginId))) throw new HostError('PLUGIN_NOT_FOUND');
    return this.supervisor(pluginId).stop(reason);
  }

  async restart(pluginId: string): Promise<RuntimeStatus> {
    if (!this.supervisors.has(pluginId) && !(await this.o.records.get(pluginId))) throw new HostError('PLUGIN_NOT_FOUND');
    return this.supervisor(pluginId).restart();
  }

  /**
   * undefined for a plugin this runtime never started or stopped (show it as
   * installed), unless it had failed before the host restarted: then `failed`
   * with that reason.
   */
  status(pluginId: string): RuntimeStatus | undefined {
    return this.supervisors.get(pluginId)?.status() ?? this.failures.remembered(pluginId);
  }

  /** True from start until stopped, including a pending crash restart (see Supervisor.hasProcess). */
  isRunning(pluginId: string): boolean {
    return this.supervisors.get(pluginId)?.hasProcess() ?? false;
  }

  /** settings.changed to the running process; a plugin this runtime never started gets them when it starts. */
  async applySettings(pluginId: string): Promise<SettingsDelivery> {
    const s = this.supervisors.get(pluginId);
    if (s) return s.applySettings();
    return { status: 'nextStart', message: `${pluginId} is not running; it gets the new settings when it starts.` };
  }

  async stopAll(reason: StopReason): Promise<void> {
    await Promise.all([...this.supervisors.values()].map((s) => s.stop(reason)));
  }

  /** Stops the plugin and forgets it (after uninstall). */
  async forget(pluginId: string): Promise<void> {
    this.failures.forget(pluginId);
    const s = this.supervisors.get(pluginId);
    if (!s) return;
    await s.stop('operator');
    this.supervisors.delete(pluginId);
    this.bootGuard.forget(pluginId);
  }

  /** Every stdio plugin as a dispatch endpoint (the dispatcher skips unavailable ones). */
  endpoints(): PluginEndpoint[] {
    return [...this.supervisors.values()];
  }

  endpoint(pluginId: string): PluginEndpoint | undefined {
    return this.supervisors.get(pluginId);
  }

  /** Stops every plugin and removes the host-exit hook. */
  async dispose(): Promise<void> {
    await this.stopAll('hostShutdown');
    await this.bootGuard.flushed();
    await this.failures.flushed();
    this.groups.dispose();
  }

  private supervisor(pluginId: string): Supervisor {
    let s = this.supervisors.get(pluginId);
    if (!s) {
      s = new Supervisor(pluginId, {
        paths: this.o.paths,
        logs: this.o.logs,
        sink: this.o.sink,
        ...(this.o.media ? { media: this.o.media } : {}),
        timings: this.timings,
        limits: this.limits,
        hostVersion: this.o.hostVersion ?? '0.0.0',
        hostEnv: this.o.hostEnv ?? process.env,
        containment: this.containment,
        runner: this.runner,
        loadRecord: (id) => this.o.records.get(id),
        loadSettings: this.o.settings ?? (async () => ({})),
        onStatusChange: (id, status) => {
          if (HAS_PROCESS.has(status.state)) this.bootGuard.running(id);
          else this.bootGuard.notRunning(id);
          this.failures.observe(id, status, new Date((this.o.now ?? Date.now)()));
          this.o.onStatusChange?.(id, status);
        },
        now: this.o.now ?? Date.now,
      });
      this.supervisors.set(pluginId, s);
    }
    return s;
  }
}
