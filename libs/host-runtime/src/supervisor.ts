import {
  HostError,
  type Delivery,
  type HostPaths,
  type LogLine,
  type MediaStore,
  type OutboundSink,
  type PluginEndpoint,
  type PluginLogStore,
  type PluginRecord,
  type PluginRouting,
  type PluginState,
  type RuntimeStatus,
  type SettingsDelivery,
  type StopReason,
} from '@host/host-core';
import { RUNTIME_DEFAULTS, type MessageEvent, type StdioManifest } from '@host/protocol';
import type { RuntimeLimits } from './limits';
import { PluginProcess, StartError, type ExitInfo } from './process/plugin-process';
import type { ProcessRunner } from './process/runner';
import type { ModuleContainment } from './process/module-containment';
import { formatDuration, restartDelay, type RuntimeTimings } from './timings';

export interface SupervisorDeps {
  paths: HostPaths;
  logs: PluginLogStore;
  sink: OutboundSink;
  media?: MediaStore;
  timings: RuntimeTimings;
  limits: RuntimeLimits;
  hostVersion: string;
  hostEnv: NodeJS.ProcessEnv;
  /** Keeps Node plugins' modules inside their package (null: not applied). */
  containment: ModuleContainment | null;
  runner: ProcessRunner;
  loadRecord: (pluginId: string) => Promise<PluginRecord | undefined>;
  loadSettings: (pluginId: string) => Promise<Record<string, unknown>>;
  onStatusChange?: (pluginId: string, status: RuntimeStatus) => void;
  now: () => number;
}

type StartKind = 'operator' | 'restart';

/**
 * Keeps one stdio plugin running: the state machine of docs/protocol/v2.md
 * ("Plugin states"), crash restarts with growing delays and a crash budget,
 * and liveness pings. It is also the plugin's endpoint for the dispatcher.
 */
export class Supervisor implements PluginEndpoint {
  readonly transport = 'stdio-jsonrpc' as const;
  private state: PluginState = 'installed';
  private stateReason: string | undefined;
  private manifest: StdioManifest | null = null;
  /** Enabled and about to be started with the host (expectStart), until a start or hold-back changes its state. */
  private bootPending = false;
  private routingCache: PluginRouting | null = null;
  private proc: PluginProcess | null = null;
  private crashTimes: number[] = [];
  private crashCount = 0;
  private lastExit: ExitInfo | null = null;
  /** The resource limit that ended the last process, if one did. */
  private lastExitLimit: 'memory' | 'cpu' | undefined;
  private lastError: string | undefined;
  private nextRestartAt: number | undefined;
  private restartTimer: NodeJS.Timeout | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  private missedPings = 0;
  /** Bumped by every operator action, so a start that an operator overtook stands down. */
  private generation = 0;
  private startTask: Promise<void> | null = null;
  private stopTask: Promise<void> | null = null;

  constructor(
    readonly pluginId: string,
    private readonly deps: SupervisorDeps,
  ) {}

  // ---- operator actions ----

  async start(): Promise<RuntimeStatus> {
    if (this.stopTask) await this.stopTask;
    if (this.startTask) {
      await this.startTask;
      return this.status();
    }
    if (this.state === 'running') return this.status();
    this.cancelRestart();
    this.crashTimes = [];
    this.crashCount = 0;
    this.lastError = undefined;
    await this.launch('operator');
    return this.status();
  }

  stop(reason: StopReason = 'operator'): Promise<RuntimeStatus> {
    this.stopTask ??= this.runStop(reason).finally(() => (this.stopTask = null));
    return this.stopTask.then(() => this.status());
  }

  async restart(): Promise<RuntimeStatus> {
    await this.stop('restart');
    return this.start();
  }

  /** Not started as the host starts (see BootGuard): `failed` with the reason, until an operator starts it. */
  holdBack(reason: string): RuntimeStatus {
    if (this.state !== 'installed' && this.state !== 'stopped' && this.state !== 'failed') return this.status();
    this.lastError = reason;
    this.log('error', reason);
    this.setState('failed', reason);
    return this.status();
  }

  status(): RuntimeStatus {
    const running = this.proc && !this.proc.hasExited;
    return {
      state: this.state,
      ...(this.stateReason ? { stateReason: this.stateReason } : {}),
      ...(running && this.proc?.pid !== undefined ? { pid: this.proc.pid, startedAt: this.proc.startedAt } : {}),
      ...(this.lastExit ? { lastExitAt: this.lastExit.at, lastExitCode: this.lastExit.code, lastExitSignal: this.lastExit.signal } : {}),
      ...(this.lastExitLimit ? { lastExitLimit: this.lastExitLimit } : {}),
      ...(this.proc?.isolation ? { isolation: this.proc.isolation } : {}),
      crashCount: this.crashCount,
      ...(this.nextRestartAt !== undefined ? { nextRestartAt: new Date(this.nextRestartAt).toISOString() } : {}),
      ...(this.lastError ? { lastError: this.lastError } : {}),
    };
  }

  // ---- endpoint ----

  routing(): PluginRouting {
    if (this.routingCache) return this.routingCache;
    const m = this.manifest;
    this.routingCache = {
      pluginId: this.pluginId,
      eventSubscriptions: m?.eventSubscriptions ?? [],
      commands: m?.commands ?? [],
      permissions: m?.permissions ?? [],
      ...(m?.concurrency ? { concurrency: m.concurrency } : {}),
      requestTimeoutMilliseconds: RUNTIME_DEFAULTS.requestTimeoutMilliseconds,
      canIntercept: m?.permissions.includes('messages.intercept') ?? false,
    };
    return this.routingCache;
  }

  /**
   * True while the plugin has, or is about to have, a process: starting,
   * running, stopping or waiting for a restart. The installer asks this before
   * replacing a package, so a pending restart cannot launch a half-swapped one.
   */
  hasProcess(): boolean {
    return this.state === 'starting' || this.state === 'running' || this.state === 'stopping' || this.state === 'restartPending';
  }

  isAvailable(): boolean {
    return this.state === 'running' && this.proc !== null && !this.proc.hasExited;
  }

  /**
   * Starting, waiting to restart after a crash, or about to be started with
   * the host (see {@link expectStart}): events routed now wait for the process
   * (see PluginEndpoint.isStarting).
   */
  isStarting(): boolean {
    return this.state === 'starting' || this.state === 'restartPending' || this.bootPending;
  }

  /** Failed (crash budget spent, or held back at boot): events still name it and fail with delivery.unavailable. */
  isDown(): boolean {
    return this.state === 'failed';
  }

  /**
   * The host is about to start this plugin (an enabled plugin at boot): from
   * now until its start begins, events for it wait instead of finding nobody.
   * Its routing is the manifest's until the process starts.
   */
  expectStart(manifest: StdioManifest): void {
    if (this.state !== 'installed' && this.state !== 'stopped') return;
    if (!this.manifest) {
      this.manifest = manifest;
      this.routingCache = null;
    }
    this.bootPending = true;
  }

  /**
   * Sends the current settings to the running process (settings.changed). A
   * process still starting is waited for: it may have read the values before
   * the change. Without a process the values apply at the next start.
   */
  async applySettings(): Promise<SettingsDelivery> {
    if (this.state === 'starting' && this.startTask) await this.startTask.catch(() => undefined);
    const proc = this.proc;
    if (!proc || !this.isAvailable()) {
      return { status: 'nextStart', message: `${this.pluginId} is ${this.state}; it gets the new settings when it starts.` };
    }
    const settings = await this.deps.loadSettings(this.pluginId);
    const outcome = await proc.changeSettings(settings, RUNTIME_DEFAULTS.requestTimeoutMilliseconds);
    if (outcome === undefined) {
      this.log('info', 'took the changed settings while running');
      return { status: 'live', message: `${this.pluginId} took the new settings while running.` };
    }
    if ('refused' in outcome) {
      // It keeps its old values (docs/protocol/v2.md 4.10); the admin API puts them back in the store.
      this.log('warn', `refused the changed settings: ${outcome.refused}`);
      return { status: 'refused', message: `${this.pluginId} refused the new settings: ${outcome.refused}`, reason: outcome.refused };
    }
    const problem = outcome.notTaken;
    this.log('warn', `did not take the changed settings: ${problem}`);
    return {
      status: 'restartRequired',
      message: `${this.pluginId} did not take the new settings while running (${problem}); restart it (POST /api/plugins/${this.pluginId}/restart) to apply them.`,
    };
  }

  /** Sends events.message through the current process; replies go to the runtime's sink. */
  deliver(event: MessageEvent, _sink: OutboundSink): Delivery {
    const proc = this.proc;
    if (!proc || !this.isAvailable()) return PluginProcess.unavailable(this.pluginId, `${this.pluginId} is ${this.state}, not running`);
    return proc.deliver(event);
  }

  // ---- internals ----

  private launch(kind: StartKind): Promise<void> {
    const generation = this.generation;
    const task = this.runLaunch(kind, generation);
    this.startTask = task.finally(() => {
      if (this.startTask === wrapped) this.startTask = null;
    });
    const wrapped = this.startTask;
    return wrapped;
  }

  private async runLaunch(kind: StartKind, generation: number): Promise<void> {
    this.setState('starting', kind === 'restart' ? `restarting after crash ${this.crashCount}` : undefined);
    const record = await this.deps.loadRecord(this.pluginId);
    if (!record || record.transport !== 'stdio-jsonrpc') {
      this.setState('failed', 'the plugin is no longer installed as a stdio package');
      throw new HostError('PLUGIN_NOT_FOUND', `No stdio plugin ${this.pluginId} is installed.`);
    }
    this.manifest = record.manifest;
    this.routingCache = null;
    const settings = await this.deps.loadSettings(this.pluginId);
    if (generation !== this.generation) throw overtaken(this.pluginId);
    const { paths } = this.deps;
    const proc: PluginProcess = new PluginProcess({
      pluginId: this.pluginId,
      manifest: record.manifest,
      directories: {
        pluginDirectory: paths.packageDir(this.pluginId),
        pluginDataDirectory: paths.dataDirOf(this.pluginId),
        pluginConfigDirectory: paths.configDirOf(this.pluginId),
        pluginCacheDirectory: paths.cacheDirOf(this.pluginId),
      },
      timings: this.deps.timings,
      logs: this.deps.logs,
      sink: this.deps.sink,
      ...(this.deps.media ? { media: this.deps.media } : {}),
      settings,
      hostVersion: this.deps.hostVersion,
      hostEnv: this.deps.hostEnv,
      containment: this.deps.containment,
      runner: this.deps.runner,
      onPollution: () => this.onPollution(proc),
      limits: this.deps.limits,
      onMisbehaving: (reason) => this.onMisbehaving(proc, reason),
    });
    this.proc = proc;
    try {
      await proc.start();
    } catch (e) {
      await proc.stop('start failed', false);
      this.lastExit = await proc.exited;
      if (generation !== this.generation) throw overtaken(this.pluginId);
      const message = e instanceof Error ? e.message : String(e);
      this.lastError = message;
      this.log('error', `start failed: ${message}`);
      if (kind === 'restart') return this.recordCrash(`start failed: ${message}`);
      this.setState('failed', `start failed: ${message}`);
      throw new HostError(e instanceof StartError ? e.code : 'PLUGIN_START_FAILED', `${this.pluginId} ${message}`);
    }
    if (generation !== this.generation) {
      this.lastExit = await proc.stop('operator', false);
      throw overtaken(this.pluginId);
    }
    this.missedPings = 0;
    this.setState('running', undefined);
    void proc.exited.then((info) => this.onExit(proc, info));
    this.schedulePing(proc);
  }

  private async runStop(reason: StopReason): Promise<void> {
    this.generation++;
    this.cancelRestart();
    this.clearPing();
    const proc = this.proc;
    const wasRunning = this.state === 'running';
    if (wasRunning || this.state === 'starting') this.setState('stopping', `stopping (${reason})`);
    if (proc && !proc.hasExited) {
      // A plugin still in its handshake cannot be asked politely.
      this.lastExit = await proc.stop(reason, wasRunning);
      this.log('info', `stopped (${reason})`);
    }
    if (this.startTask) await this.startTask.catch(() => undefined);
    this.setState('stopped', undefined);
  }

  private onExit(proc: PluginProcess, info: ExitInfo): void {
    if (proc !== this.proc) return;
    this.lastExit = info;
    this.lastExitLimit = proc.limitHit;
    this.clearPing();
    if (this.state !== 'running') return;
    const how = info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`;
    this.recordCrash(proc.hostReason ?? `the process ${how} unexpectedly`);
  }

  private recordCrash(reason: string): void {
    const t = this.deps.timings;
    const now = this.deps.now();
    this.crashTimes = this.crashTimes.filter((at) => now - at < t.crashWindowMilliseconds);
    this.crashTimes.push(now);
    this.crashCount++;
    this.lastError = reason;
    this.log('error', `crashed: ${reason}`);
    if (this.crashTimes.length >= t.crashBudget) {
      this.setState(
        'failed',
        `${reason}; it crashed ${this.crashTimes.length} times within ${formatDuration(t.crashWindowMilliseconds)}, so it is not restarted. Fix the cause, then start it again.`,
      );
      return;
    }
    const delay = restartDelay(t, this.crashTimes.length);
    this.nextRestartAt = now + delay;
    this.setState('restartPending', `${reason}; restarting in ${formatDuration(delay)}`);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.nextRestartAt = undefined;
      this.launch('restart').catch(() => undefined);
    }, delay);
    this.restartTimer.unref();
  }

  private onPollution(proc: PluginProcess): void {
    // A process the host is already ending for another reason may die mid-frame; that is not news.
    if (proc !== this.proc || this.state !== 'running' || proc.hostReason) return;
    proc.hostReason = proc.pollutionError('while running').message;
    void proc.stop('unhealthy', false);
  }

  /** The process broke a resource limit (see RuntimeLimits): end it; its exit counts as a crash. */
  private onMisbehaving(proc: PluginProcess, reason: string): void {
    if (proc !== this.proc) return;
    proc.hostReason = reason;
    void proc.stop('unhealthy', false);
  }

  private schedulePing(proc: PluginProcess): void {
    const t = this.deps.timings;
    if (t.pingIntervalMilliseconds <= 0) return;
    this.pingTimer = setTimeout(async () => {
      this.pingTimer = null;
      if (proc !== this.proc || this.state !== 'running') return;
      const ok = await proc.ping(t.pingTimeoutMilliseconds);
      if (proc !== this.proc || this.state !== 'running') return;
      this.missedPings = ok ? 0 : this.missedPings + 1;
      if (this.missedPings >= t.missedPingsBeforeHung) {
        proc.hostReason = `hung: it did not answer plugin.ping ${this.missedPings} times in a row (${formatDuration(t.pingTimeoutMilliseconds)} each)`;
        this.log('error', `${proc.hostReason}; killing its process group`);
        proc.kill();
        return;
      }
      this.schedulePing(proc);
    }, t.pingIntervalMilliseconds);
    this.pingTimer.unref();
  }

  private clearPing(): void {
    if (this.pingTimer) clearTimeout(this.pingTimer);
    this.pingTimer = null;
  }

  private cancelRestart(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    this.nextRestartAt = undefined;
  }

  private setState(state: PluginState, reason: string | undefined): void {
    this.bootPending = false;
    this.state = state;
    this.stateReason = reason;
    this.deps.onStatusChange?.(this.pluginId, this.status());
  }

  private log(level: LogLine['level'], message: string): void {
    this.deps.logs.append(this.pluginId, { at: new Date().toISOString(), stream: 'host', level, message });
  }
}

function overtaken(pluginId: string): HostError {
  return new HostError('PLUGIN_STATE_CONFLICT', `${pluginId} was stopped while it was starting.`);
}
