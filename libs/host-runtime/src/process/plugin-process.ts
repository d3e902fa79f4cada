import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, realpath, stat } from 'node:fs/promises';
import {
  answeredDelivery,
  chatEventOf,
  type CompletionOutcome,
  type Delivery,
  type DeliveryOutcome,
  type LogLine,
  type MediaStore,
  type OutboundSink,
  type PluginLogStore,
} from '@host/host-core';
import {
  DELIVERY_ERRORS,
  formatBytes,
  SettingsChangedResultSchema,
  LIMITS,
  Methods,
  type CancelReason,
  type MessageEvent,
  type PluginError,
  type StdioManifest,
} from '@host/protocol';
import { isInsideDirectory } from '@host/protocol/node';
import { createMessageConnection, ErrorCodes, ResponseError, type MessageConnection } from 'vscode-jsonrpc/node';
import { FramedMessageReader, type FramingFailure } from '../connection/framed-reader';
import { FramedMessageWriter } from '../connection/framed-writer';
import { RequestBacklog } from '../connection/request-backlog';
import { createPluginRequestHandler } from '../connection/plugin-requests';
import { parseEventAck } from '../connection/params-validator';
import { readStderr } from '../logs/stderr-reader';
import { LogRateLimiter } from '../logs/log-rate-limit';
import type { RuntimeLimits } from '../limits';
import { formatDuration, type RuntimeTimings } from '../timings';
import { checkInitializeResult, initializeParams } from './handshake';
import { lowerGroupPriority } from './process-groups';
import { buildEnvironment, resolveLaunch, type PluginDirectories } from './launch';
import type { ModuleContainment } from './module-containment';
import type { ProcessRunner, RunningProcess } from './runner';
import type { IsolationStatus, LimitHit } from '../isolation/settings';
import { exitError, LIMIT_REASONS, pollutionError, refusalReason, StartError, StderrTail, type ExitInfo } from './exit-diagnosis';

export { StartError, type ExitInfo } from './exit-diagnosis';

export interface PluginProcessOptions {
  pluginId: string;
  manifest: StdioManifest;
  directories: PluginDirectories;
  timings: RuntimeTimings;
  logs: PluginLogStore;
  sink: OutboundSink;
  /** Keeps the bytes of media.upload (docs/protocol/v2.md 4.12). */
  media?: MediaStore;
  settings: Record<string, unknown>;
  hostVersion: string;
  hostEnv: NodeJS.ProcessEnv;
  /** Keeps a Node plugin's modules inside its package (null: not applied). */
  containment: ModuleContainment | null;
  /** Starts the process (the default runner: a local process group). */
  runner: ProcessRunner;
  /** Called when stdout carries something that is not a frame, at most once. */
  onPollution: (failure: FramingFailure) => void;
  /** What the host buffers for this process and how fast it may log. */
  limits: RuntimeLimits;
  /** Called at most once when the plugin misbehaves in a way that ends it (it does not read its stdin); says why. */
  onMisbehaving: (reason: string) => void;
}

/** The codes vscode-jsonrpc rejects a pending request with when the connection goes (-32099..-32096). */
const CONNECTION_LOST_CODES = new Set<number>([
  ErrorCodes.MessageWriteError,
  ErrorCodes.MessageReadError,
  ErrorCodes.PendingResponseRejected,
  ErrorCodes.ConnectionInactive,
]);

/** Plugin-to-host requests the host works on at once per plugin; more wait in order. */
const MAX_PARALLEL_PLUGIN_REQUESTS = 64;
/** Events a process remembers having been handed, newest kept: a log.write naming one keeps its eventId. */
export const REMEMBERED_DELIVERIES = 1024;

/**
 * One run of a stdio plugin process: spawn, handshake, requests, stop. A new
 * instance (with a new token) is created for every start; the token dies with
 * the process because the handlers holding it are disposed with the connection.
 */
export class PluginProcess {
  readonly instanceId = randomUUID();
  private readonly token = randomBytes(32).toString('base64url');
  private child: RunningProcess | null = null;
  private connection: MessageConnection | null = null;
  /** The stderr lines a start failure quotes. */
  private readonly stderr = new StderrTail();
  private exitInfo: ExitInfo | null = null;
  private resolveExit!: (info: ExitInfo) => void;
  /** Resolves when the process has exited and its group is gone. */
  readonly exited: Promise<ExitInfo> = new Promise((r) => (this.resolveExit = r));
  private spawnError: NodeJS.ErrnoException | null = null;
  private pollution: FramingFailure | null = null;
  private resolvePolluted!: () => void;
  private readonly polluted = new Promise<void>((r) => (this.resolvePolluted = r));
  /** Why the host ended this process (stdout pollution, hung), when it did. */
  hostReason: string | null = null;
  private stopping: Promise<ExitInfo> | null = null;
  /** The host-to-plugin methods the plugin listed in its host.initialize result. */
  capabilities: readonly string[] = [];
  /** Set when the pipe broke or closed; a pending request that fails after it failed for that reason. */
  private linkLost = false;
  /** Accepted (or not yet decided) events whose events.completed has not arrived, by eventId. */
  private readonly awaitingCompletion = new Map<string, (outcome: CompletionOutcome) => void>();
  /** log.write calls and stderr lines over the plugin's log rate are dropped and counted. */
  private readonly logRate: LogRateLimiter;
  /** The last REMEMBERED_DELIVERIES events handed to this process, oldest first (a Set keeps insertion order). */
  private readonly delivered = new Set<string>();
  private reader: FramedMessageReader | null = null;
  /** Set once the plugin counts as misbehaving; what vscode-jsonrpc reports after that is noise. */
  private misbehaving = false;
  pid: number | undefined;
  startedAt: string | undefined;
  /** The resource limit that ended the process, if one did. */
  limitHit: LimitHit | undefined;

  constructor(private readonly o: PluginProcessOptions) {
    this.logRate = new LogRateLimiter({ linesPerSecond: o.limits.logLinesPerSecond, burst: o.limits.logBurst }, (m) => this.log('warn', m));
  }

  get hasExited(): boolean {
    return this.exitInfo !== null;
  }

  /** Spawns the process and runs the handshake; rejects with a StartError that says what happened. */
  async start(): Promise<void> {
    const { manifest, directories } = this.o;
    const launch = resolveLaunch(directories.pluginDirectory, manifest.transport.stdio);
    if (!launch.ok) throw this.finishEarly(new StartError(launch.problem.code, launch.problem.message));
    const cwdProblem = await checkWorkingDirectory(directories.pluginDirectory, launch.cwd);
    if (cwdProblem) throw this.finishEarly(new StartError('PLUGIN_WORKDIR_INVALID', cwdProblem));
    await Promise.all(
      [directories.pluginDataDirectory, directories.pluginConfigDirectory, directories.pluginCacheDirectory].map((d) =>
        mkdir(d, { recursive: true }),
      ),
    );
    const env = buildEnvironment(this.o.hostEnv, manifest.transport.stdio.environment, this.o.pluginId, directories);
    if (this.o.containment) env['NODE_OPTIONS'] = this.o.containment.nodeOptions(env['NODE_OPTIONS']);
    let child: RunningProcess;
    try {
      child = this.o.runner.start({
        command: launch.command,
        args: launch.args,
        cwd: launch.cwd,
        env,
        plugin: {
          pluginId: this.o.pluginId,
          directories,
          network: manifest.transport.stdio.network,
          readOnly: this.o.containment ? [this.o.containment.folder] : [],
        },
      });
    } catch (e) {
      throw this.finishEarly(e instanceof StartError ? e : new StartError('PLUGIN_ISOLATION_FAILED', (e as Error).message));
    }
    if (child.isolation) this.log('info', `isolation: ${child.isolation.summary}`);
    this.child = child;
    this.pid = child.pid;
    this.startedAt = new Date().toISOString();
    child.onError((e) => {
      if (child.pid === undefined) {
        this.spawnError = e;
        this.markExited(null, null);
      }
    });
    child.onExit((code, signal) => this.onExit(code, signal));
    // Lines past the log rate are counted unread; a flooding plugin's stderr is read in whole pipes, then left a while,
    // and the plugin runs at the lowest CPU priority from then on, so its loop slows no one but itself.
    readStderr(
      child.stderr,
      this.logRate,
      (line) => this.onStderrLine(line),
      () => {
        const pid = child.pid;
        if (pid === undefined) return;
        const lowered = lowerGroupPriority(pid);
        this.log(
          'warn',
          `stderr flood: the plugin writes many times its log rate; its ${lowered} process(es) now run at the lowest CPU priority`,
        );
      },
    );
    this.connection = this.connect(child);
    await this.handshake();
  }

  private connect(child: RunningProcess): MessageConnection {
    const { limits } = this.o;
    const backlog = new RequestBacklog({ highWaterMark: limits.maxQueuedMessages, lowWaterMark: limits.resumeReadingAt });
    const reader = new FramedMessageReader(
      child.stdout,
      (failure) => {
        // Killed for misbehaving, it may well stop in the middle of a frame.
        if (this.misbehaving) return;
        this.pollution = failure;
        this.log(
          'error',
          `stdout pollution: the plugin wrote ${failure.bytes}, which is not a protocol frame (${failure.code}: ${failure.message})`,
        );
        this.resolvePolluted();
        this.o.onPollution(failure);
      },
      LIMITS,
      backlog,
    );
    this.reader = reader;
    const writer = new FramedMessageWriter(child.stdin, backlog, {
      maxUnreadBytes: limits.maxUnreadBytes,
      onOverflow: (unread) => this.onUnreadOverflow(unread),
    });
    // Once the process is being stopped, answers that can no longer be written are expected, not news.
    const quiet = () => this.misbehaving || this.stopping !== null || this.exitInfo !== null;
    const logger = {
      error: (m: string) => {
        if (!quiet()) this.log('error', m);
      },
      warn: (m: string) => {
        if (!quiet()) this.log('warn', m);
      },
      info: () => undefined,
      log: () => undefined,
    };
    const connection = createMessageConnection(reader, writer, logger, {
      maxParallelism: MAX_PARALLEL_PLUGIN_REQUESTS,
      messageStrategy: backlog.strategy,
    });
    const handle = createPluginRequestHandler({
      pluginId: this.o.pluginId,
      token: this.token,
      permissions: this.o.manifest.permissions,
      logs: this.o.logs,
      logRate: this.logRate,
      deliveredHere: (eventId) => this.delivered.has(eventId),
      sink: this.o.sink,
      ...(this.o.media ? { media: this.o.media } : {}),
      onCompleted: (eventId, error, durationMs) =>
        this.completeEvent(eventId, { error, ...(durationMs !== undefined ? { durationMs } : {}) }),
    });
    connection.onRequest((method, params) => handle(method, params));
    connection.onNotification(() => undefined);
    connection.onError(() => void (this.linkLost = true));
    connection.onClose(() => void (this.linkLost = true));
    connection.listen();
    return connection;
  }

  /**
   * The plugin does not read what the host writes to its stdin: stop reading
   * it too (nothing it sends can be answered) and have it stopped.
   */
  private onUnreadOverflow(unread: number): void {
    if (this.misbehaving) return;
    this.misbehaving = true;
    this.reader?.halt();
    const reason = `does not read its stdin: ${formatBytes(unread)} written to it wait unread (limit ${formatBytes(this.o.limits.maxUnreadBytes)}); the host stopped it`;
    this.log('error', reason);
    this.o.onMisbehaving(reason);
  }

  private async handshake(): Promise<void> {
    const { manifest, directories, pluginId } = this.o;
    const params = initializeParams({
      manifest,
      pluginId,
      instanceId: this.instanceId,
      token: this.token,
      hostVersion: this.o.hostVersion,
      directories,
      settings: this.o.settings,
    });
    const timeout = this.o.timings.initializeTimeoutMilliseconds;
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      this.request(Methods.initialize.method, params).then(
        (result) => ({ kind: 'answer' as const, result }),
        (error: unknown) => ({ kind: 'error' as const, error }),
      ),
      this.exited.then(() => ({ kind: 'exit' as const })),
      this.polluted.then(() => ({ kind: 'polluted' as const })),
      new Promise<{ kind: 'timeout' }>((r) => (timer = setTimeout(() => r({ kind: 'timeout' }), timeout))),
    ]);
    clearTimeout(timer);
    if (this.pollution || outcome.kind === 'polluted') throw this.pollutionError('before answering host.initialize');
    if (outcome.kind === 'exit' || this.spawnError) throw this.exitError();
    if (outcome.kind === 'timeout') {
      throw new StartError(
        'PLUGIN_START_TIMEOUT',
        `did not answer host.initialize within ${formatDuration(timeout)}; does its manifest pass --host-stdio, and does it read requests from stdin?${this.stderr.text()}`,
      );
    }
    if (outcome.kind === 'error') {
      const e = outcome.error as { code?: number; message?: string };
      if (this.exitInfo) throw this.exitError();
      throw new StartError(
        'PLUGIN_HANDSHAKE_INVALID',
        `answered host.initialize with error ${e.code ?? ''}: ${e.message ?? String(outcome.error)}`,
      );
    }
    const checked = checkInitializeResult(outcome.result, pluginId);
    if (!checked.ok) throw new StartError('PLUGIN_HANDSHAKE_INVALID', checked.message);
    this.capabilities = checked.value.capabilities;
    this.log('info', `started (pid ${this.pid}, ${checked.value.sdkName} ${checked.value.sdkVersion})`);
  }

  /** Sends a host-to-plugin request; rejects when the connection fails or closes. */
  request(method: string, params: unknown): Promise<unknown> {
    if (!this.connection || this.exitInfo) return Promise.reject(new Error('the plugin process is not running'));
    return this.connection.sendRequest(method, params);
  }

  /**
   * Sends events.message, or events.deliver for an event of another type. The decision is the ACK; the completion settles
   * with events.completed after an accepted ACK, at once after a decline or
   * a failure, and with `delivery.interrupted` when the process exits first.
   */
  deliver(event: MessageEvent): Delivery {
    const started = performance.now();
    const { eventId } = event;
    const outcome = (error: DeliveryOutcome['error'], accepted = false, intercepted = false): DeliveryOutcome => ({
      pluginId: this.o.pluginId,
      accepted,
      intercepted,
      error,
      durationMs: performance.now() - started,
    });
    let complete!: (c: CompletionOutcome) => void;
    const completion = new Promise<CompletionOutcome>((resolve) => (complete = resolve));
    // Registered before sending: events.completed may be read right behind the ACK.
    this.awaitingCompletion.set(eventId, complete);
    this.delivered.delete(eventId);
    this.delivered.add(eventId);
    if (this.delivered.size > REMEMBERED_DELIVERIES) this.delivered.delete(this.delivered.values().next().value as string);
    const done = (o: DeliveryOutcome): DeliveryOutcome => {
      this.completeEvent(eventId, { error: null });
      return o;
    };
    // An event of another type than message.created goes out as the plugin gets it, through events.deliver.
    const chat = chatEventOf(event);
    const method = chat ? Methods.deliver.method : Methods.message.method;
    const decision = this.request(method, chat ?? event).then(
      (answer): DeliveryOutcome => {
        const ack = parseEventAck(answer);
        if (!ack.success || ack.data.eventId !== eventId) {
          const why = ack.success
            ? `eventId ${JSON.stringify(ack.data.eventId)} instead of ${JSON.stringify(eventId)}`
            : ack.error.issues[0]?.message;
          return done(outcome({ code: 'delivery.ack.invalid', message: `the ACK is not valid: ${why}` }));
        }
        const a = ack.data;
        const error = a.error ? { code: a.error.code, message: a.error.message } : null;
        if (!a.accepted) return done(outcome(error));
        if (a.intercepted && !this.o.manifest.permissions.includes('messages.intercept')) {
          const notice = { code: 'delivery.intercept.undeclared', message: DELIVERY_ERRORS['delivery.intercept.undeclared'].message };
          this.log('warn', `event ${eventId}: intercepted: true ignored; the manifest does not declare messages.intercept`);
          return { ...outcome(error, true, false), notice };
        }
        return outcome(error, true, a.intercepted);
      },
      (e: unknown): DeliveryOutcome => {
        // vscode-jsonrpc's own codes mean "connection gone" only when it is gone: a live plugin may answer with any code.
        if (e instanceof ResponseError && !(CONNECTION_LOST_CODES.has(e.code) && this.connectionGone)) {
          return done(outcome({ code: 'delivery.plugin_error', message: `${method} failed with error ${e.code}: ${e.message}` }));
        }
        return done(
          outcome({ code: 'delivery.failed', message: 'the plugin exited or its connection closed before it acknowledged the event' }),
        );
      },
    );
    return { decision, completion, cancel: (reason) => this.cancelEvent(eventId, reason) };
  }

  /** Settles the completion of an event; false when nothing waited for it (unknown, reported twice, past its deadline). */
  private completeEvent(eventId: string, outcome: CompletionOutcome): boolean {
    const complete = this.awaitingCompletion.get(eventId);
    if (!complete) return false;
    this.awaitingCompletion.delete(eventId);
    complete(outcome);
    return true;
  }

  /** The host stopped waiting: tell the plugin, and after the deadline stop waiting for its completion too. */
  private cancelEvent(eventId: string, reason: CancelReason): void {
    if (reason === 'deadline') this.awaitingCompletion.delete(eventId);
    if (!this.connectionGone) this.request(Methods.cancel.method, { eventId, reason }).catch(() => undefined);
  }

  private get connectionGone(): boolean {
    return this.linkLost || this.exitInfo !== null;
  }

  /** An unavailable plugin's answer, in the shape of a delivery. */
  static unavailable(pluginId: string, message: string): Delivery {
    return answeredDelivery(
      Promise.resolve({ pluginId, accepted: false, intercepted: false, error: { code: 'delivery.unavailable', message }, durationMs: 0 }),
    );
  }

  /**
   * settings.changed with a deadline (docs/protocol/v2.md 4.10): undefined
   * when the plugin took the values; `refused` with the plugin's own reason
   * when it answered with an error (it keeps its old values); else why the
   * values did not reach it, in words for the operator.
   */
  async changeSettings(
    settings: Record<string, unknown>,
    timeoutMs: number,
  ): Promise<{ refused: string } | { notTaken: string } | undefined> {
    if (!this.capabilities.includes(Methods.settingsChanged.method)) {
      return { notTaken: `its SDK does not take settings while running (no ${Methods.settingsChanged.method} in its capabilities)` };
    }
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      this.request(Methods.settingsChanged.method, { settings }).then(
        (result) =>
          SettingsChangedResultSchema.safeParse(result).success ? undefined : { notTaken: 'it answered with an invalid result' },
        (e: { message?: unknown }) => ({ refused: refusalReason(typeof e?.message === 'string' ? e.message : String(e)) }),
      ),
      new Promise<{ notTaken: string }>(
        (r) => (timer = setTimeout(() => r({ notTaken: `it did not answer within ${timeoutMs} ms` }), timeoutMs)),
      ),
    ]);
    clearTimeout(timer);
    return outcome;
  }

  /** plugin.ping with a deadline; true when answered in time. */
  async ping(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const answered = await Promise.race([
      this.request(Methods.ping.method, { nonce: randomUUID() }).then(
        () => true,
        () => false,
      ),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    return answered;
  }

  /**
   * Stops the process: plugin.stop, then up to the grace period for it to
   * exit, then stdin closed and SIGTERM to the group, then SIGKILL.
   * Idempotent; concurrent calls share one sequence.
   */
  stop(reason: string, polite = true): Promise<ExitInfo> {
    this.stopping ??= this.runStop(reason, polite);
    return this.stopping;
  }

  private async runStop(reason: string, polite: boolean): Promise<ExitInfo> {
    const t = this.o.timings;
    if (this.exitInfo) return this.exited;
    if (polite && !this.pollution) {
      this.request(Methods.stop.method, { reason, graceMilliseconds: t.stopGraceMilliseconds }).catch(() => undefined);
      if (await this.exitWithin(t.stopGraceMilliseconds)) return this.exited;
      this.log('warn', `did not exit within ${formatDuration(t.stopGraceMilliseconds)} of plugin.stop; sending SIGTERM`);
    }
    this.child?.stdin.end();
    this.child?.signal('SIGTERM');
    if (await this.exitWithin(t.killAfterMilliseconds)) return this.exited;
    this.log('warn', `did not exit within ${formatDuration(t.killAfterMilliseconds)} of SIGTERM; sending SIGKILL`);
    this.kill();
    return this.exited;
  }

  /** SIGKILLs the whole group now (hung plugin, host shutdown). */
  kill(): void {
    this.child?.signal('SIGKILL');
  }

  private exitWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([this.exited.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]).finally(() =>
      clearTimeout(timer),
    );
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    // Processes the plugin started go with it; none may outlive it.
    if (this.child?.descendantsAlive()) this.child.signal('SIGKILL');
    const limit = this.child?.limitHit?.();
    if (limit) {
      this.limitHit = limit;
      this.hostReason ??= LIMIT_REASONS[limit];
      this.log('error', LIMIT_REASONS[limit]);
    }
    this.markExited(code, signal);
  }

  /** How the running process is isolated (see IsolatingProcessRunner). */
  get isolation(): IsolationStatus | undefined {
    return this.child?.isolation;
  }

  private markExited(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exitInfo) return;
    this.exitInfo = { code, signal, at: new Date().toISOString() };
    this.child?.release();
    const interrupted: PluginError = {
      code: 'delivery.interrupted',
      message: `${this.o.pluginId} exited before it reported the completion of this event (${signal ? `killed by ${signal}` : `exit code ${code}`})`,
    };
    for (const complete of this.awaitingCompletion.values()) complete({ error: interrupted });
    this.awaitingCompletion.clear();
    const info = this.exitInfo;
    // Let stdout drain (a last ACK or log line) before the connection goes.
    setImmediate(() => {
      this.connection?.dispose();
      this.child?.stdin.destroy();
      // A paused stdout (a flooding plugin) would keep its buffered chunks.
      if (this.reader?.isPaused || this.misbehaving) this.child?.stdout.destroy();
      this.logRate.flush();
      this.resolveExit(info);
    });
  }

  private onStderrLine(line: string): void {
    this.stderr.add(line);
    // Within the log rate already: readStderr only hands over lines the limiter admitted.
    this.o.logs.append(this.o.pluginId, { at: new Date().toISOString(), stream: 'stderr', level: 'info', message: line });
  }

  private log(level: LogLine['level'], message: string): void {
    this.o.logs.append(this.o.pluginId, { at: new Date().toISOString(), stream: 'host', level, message });
  }

  private exitError(): StartError {
    const { command, args } = this.o.manifest.transport.stdio;
    return exitError({ spawnError: this.spawnError, exit: this.exitInfo, command, args, stderr: this.stderr });
  }

  pollutionError(when: string): StartError {
    return pollutionError(this.pollution!, when);
  }

  private finishEarly(error: StartError): StartError {
    this.markExited(null, null);
    return error;
  }
}

/** The working directory must exist, be a folder and stay inside the package after symlinks. */
async function checkWorkingDirectory(packageDir: string, cwd: string): Promise<string | null> {
  const s = await stat(cwd).catch(() => null);
  if (!s?.isDirectory()) return `working directory ${JSON.stringify(cwd)} does not exist in the package`;
  const [root, real] = await Promise.all([realpath(packageDir), realpath(cwd)]);
  if (!isInsideDirectory(root, real)) {
    return 'the working directory leaves the package through a symbolic link';
  }
  return null;
}
