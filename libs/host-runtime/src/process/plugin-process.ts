import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, realpath, stat } from 'node:fs/promises';
import type { LogLine, OutboundSink, PluginLogStore } from '@host/host-core';
import {
  InitializeResultSchema,
  LIMITS,
  Methods,
  PROTOCOL_VERSION,
  RUNTIME_DEFAULTS,
  toValidationIssues,
  type InitializeParams,
  type RuntimeErrorCode,
  type StdioManifest,
} from '@host/protocol';
import { isInsideDirectory } from '@host/protocol/node';
import { createMessageConnection, type MessageConnection } from 'vscode-jsonrpc/node';
import { FramedMessageReader, type FramingFailure } from '../connection/framed-reader';
import { FramedMessageWriter } from '../connection/framed-writer';
import { RequestBacklog } from '../connection/request-backlog';
import { createPluginRequestHandler } from '../connection/plugin-requests';
import { LineSplitter } from '../logs/line-limits';
import { formatDuration, type RuntimeTimings } from '../timings';
import { buildEnvironment, resolveLaunch, type PluginDirectories } from './launch';
import { groupAlive, signalGroup, type ProcessGroups } from './process-groups';

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  at: string;
}

/** A start that failed, with the runtime error code and a message saying what the plugin did. */
export class StartError extends Error {
  constructor(
    readonly code: RuntimeErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'StartError';
  }
}

export interface PluginProcessOptions {
  pluginId: string;
  manifest: StdioManifest;
  directories: PluginDirectories;
  timings: RuntimeTimings;
  logs: PluginLogStore;
  sink: OutboundSink;
  settings: Record<string, unknown>;
  hostVersion: string;
  hostEnv: NodeJS.ProcessEnv;
  groups: ProcessGroups;
  /** Called when stdout carries something that is not a frame, at most once. */
  onPollution: (failure: FramingFailure) => void;
}

const STDERR_TAIL_LINES = 8;
const STDERR_TAIL_CHARS = 600;
/** Plugin-to-host requests the host works on at once per plugin; more wait in order. */
const MAX_PARALLEL_PLUGIN_REQUESTS = 64;

/**
 * One run of a stdio plugin process: spawn, handshake, requests, stop. A new
 * instance (with a new token) is created for every start; the token dies with
 * the process because the handlers holding it are disposed with the connection.
 */
export class PluginProcess {
  readonly instanceId = randomUUID();
  private readonly token = randomBytes(32).toString('base64url');
  private child: ChildProcess | null = null;
  private connection: MessageConnection | null = null;
  private readonly stderrTail: string[] = [];
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
  pid: number | undefined;
  startedAt: string | undefined;

  constructor(private readonly o: PluginProcessOptions) {}

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
    const child = spawn(launch.command, launch.args, {
      cwd: launch.cwd,
      env,
      detached: true,
      shell: false,
      windowsHide: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    this.pid = child.pid;
    if (child.pid !== undefined) this.o.groups.add(child.pid);
    this.startedAt = new Date().toISOString();
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (child.pid === undefined) {
        this.spawnError = e;
        this.markExited(null, null);
      }
    });
    child.on('exit', (code, signal) => this.onExit(code, signal));
    const splitter = new LineSplitter((line) => this.onStderrLine(line));
    child.stderr?.on('data', (chunk: Buffer) => splitter.push(chunk));
    child.stderr?.on('end', () => splitter.end());
    this.connection = this.connect(child);
    await this.handshake();
  }

  private connect(child: ChildProcess): MessageConnection {
    const backlog = new RequestBacklog();
    const reader = new FramedMessageReader(child.stdout!, (failure) => {
      this.pollution = failure;
      this.log('error', `stdout pollution: the plugin wrote ${failure.bytes}, which is not a protocol frame (${failure.code}: ${failure.message})`);
      this.resolvePolluted();
      this.o.onPollution(failure);
    }, LIMITS, backlog);
    const writer = new FramedMessageWriter(child.stdin!, backlog);
    const logger = {
      error: (m: string) => this.log('error', m),
      warn: (m: string) => this.log('warn', m),
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
      sink: this.o.sink,
    });
    connection.onRequest((method, params) => handle(method, params));
    connection.onNotification(() => undefined);
    connection.onError(() => undefined);
    connection.listen();
    return connection;
  }

  private async handshake(): Promise<void> {
    const { manifest, directories, pluginId } = this.o;
    const concurrency = manifest.concurrency;
    const params: InitializeParams = {
      supportedProtocolVersions: [PROTOCOL_VERSION],
      instanceId: this.instanceId,
      pluginId,
      hostVersion: this.o.hostVersion,
      directories,
      token: this.token,
      encoding: 'json',
      runtime: {
        maxConcurrentEvents: concurrency?.maxConcurrentEvents ?? RUNTIME_DEFAULTS.maxConcurrentEvents,
        queueCapacity: concurrency?.queueCapacity ?? RUNTIME_DEFAULTS.queueCapacity,
        requestTimeoutMilliseconds: RUNTIME_DEFAULTS.requestTimeoutMilliseconds,
        handlerDeadlineMilliseconds: concurrency?.handlerDeadlineMilliseconds ?? RUNTIME_DEFAULTS.handlerDeadlineMilliseconds,
        maxHeaderLength: LIMITS.maxHeaderBytes,
        maxPayloadLength: LIMITS.maxPayloadBytes,
      },
      settings: this.o.settings,
    };
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
        `did not answer host.initialize within ${formatDuration(timeout)}; does its manifest pass --host-stdio, and does it read requests from stdin?${this.tailText()}`,
      );
    }
    if (outcome.kind === 'error') {
      const e = outcome.error as { code?: number; message?: string };
      if (this.exitInfo) throw this.exitError();
      throw new StartError('PLUGIN_HANDSHAKE_INVALID', `answered host.initialize with error ${e.code ?? ''}: ${e.message ?? String(outcome.error)}`);
    }
    const parsed = InitializeResultSchema.safeParse(outcome.result);
    if (!parsed.success) {
      const issues = toValidationIssues(parsed.error, 'initialize').map((i) => i.message);
      throw new StartError('PLUGIN_HANDSHAKE_INVALID', `answered host.initialize with an invalid result: ${issues.join(' ')}`);
    }
    if (parsed.data.pluginId !== pluginId) {
      throw new StartError('PLUGIN_HANDSHAKE_INVALID', `answered pluginId ${parsed.data.pluginId} but the manifest says ${pluginId}`);
    }
    this.log('info', `started (pid ${this.pid}, ${parsed.data.sdkName} ${parsed.data.sdkVersion})`);
  }

  /** Sends a host-to-plugin request; rejects when the connection fails or closes. */
  request(method: string, params: unknown): Promise<unknown> {
    if (!this.connection || this.exitInfo) return Promise.reject(new Error('the plugin process is not running'));
    return this.connection.sendRequest(method, params);
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
    this.child?.stdin?.end();
    if (this.pid !== undefined) signalGroup(this.pid, 'SIGTERM');
    if (await this.exitWithin(t.killAfterMilliseconds)) return this.exited;
    this.log('warn', `did not exit within ${formatDuration(t.killAfterMilliseconds)} of SIGTERM; sending SIGKILL`);
    this.kill();
    return this.exited;
  }

  /** SIGKILLs the whole group now (hung plugin, host shutdown). */
  kill(): void {
    if (this.pid !== undefined) signalGroup(this.pid, 'SIGKILL');
  }

  private exitWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      this.exited.then(() => true),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms))),
    ]).finally(() => clearTimeout(timer));
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    const pid = this.pid;
    // Children the plugin started share its group; none may outlive it.
    if (pid !== undefined && groupAlive(pid)) signalGroup(pid, 'SIGKILL');
    this.markExited(code, signal);
  }

  private markExited(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exitInfo) return;
    this.exitInfo = { code, signal, at: new Date().toISOString() };
    if (this.pid !== undefined) this.o.groups.delete(this.pid);
    const info = this.exitInfo;
    // Let stdout drain (a last ACK or log line) before the connection goes.
    setImmediate(() => {
      this.connection?.dispose();
      this.child?.stdin?.destroy();
      this.resolveExit(info);
    });
  }

  private onStderrLine(line: string): void {
    this.stderrTail.push(line);
    if (this.stderrTail.length > STDERR_TAIL_LINES) this.stderrTail.shift();
    this.o.logs.append(this.o.pluginId, { at: new Date().toISOString(), stream: 'stderr', level: 'info', message: line });
  }

  private log(level: LogLine['level'], message: string): void {
    this.o.logs.append(this.o.pluginId, { at: new Date().toISOString(), stream: 'host', level, message });
  }

  /** What the process left on stderr, for start failure messages. */
  private tailText(): string {
    const text = this.stderrTail.join('\n').slice(-STDERR_TAIL_CHARS);
    return text ? `; stderr tail: ${JSON.stringify(text)}` : '; it wrote nothing to stderr';
  }

  private exitError(): StartError {
    const e = this.spawnError;
    const command = this.o.manifest.transport.stdio.command;
    if (e) {
      if (e.code === 'ENOENT') {
        const where = /[\\/]/.test(command) ? 'does not exist in the package' : 'was not found on PATH; install it on the host';
        return new StartError('PLUGIN_COMMAND_NOT_FOUND', `command "${command}" ${where}`);
      }
      if (e.code === 'EACCES') {
        return new StartError('PLUGIN_COMMAND_NOT_FOUND', `command "${command}" is not executable; give it execute permission in the package (chmod +x)`);
      }
      return new StartError('PLUGIN_START_FAILED', `command "${command}" could not be started: ${e.message}`);
    }
    const x = this.exitInfo;
    const how = x?.signal ? `was killed by ${x.signal}` : `exited with code ${x?.code}`;
    return new StartError('PLUGIN_START_FAILED', `${how} before answering host.initialize${this.tailText()}`);
  }

  pollutionError(when: string): StartError {
    const p = this.pollution!;
    return new StartError(
      'PLUGIN_STDOUT_POLLUTION',
      `stdout pollution (PLUGIN_STDOUT_POLLUTION): ${when} the plugin wrote ${p.bytes} to stdout, which is not a protocol frame (${p.code}); write logs to stderr or log.write, never to stdout`,
    );
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
