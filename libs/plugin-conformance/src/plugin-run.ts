import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { routableEvent, takesNoReply, type LogLine, type OutboundRequest, type OutboundSink, type PluginLogStore } from '@host/host-core';
import {
  buildEnvironment,
  createPluginRequestHandler,
  IsolatingProcessRunner,
  LineSplitter,
  LocalProcessRunner,
  ModuleContainment,
  ProcessGroups,
  resolveLaunch,
  restoreSupport,
  type IsolationSettings,
  type PluginDirectories,
  type PortableIsolationSupport,
  type ProcessRunner,
  type RunningProcess,
} from '@host/host-runtime';
import { renderParsedMessage } from '@host/messages';
import {
  encodeFrame,
  FrameDecoder,
  HOST_STDIO_FLAG,
  LIMITS,
  Methods,
  RpcErrorCode,
  type ChatEvent,
  type JsonRpcMessage,
  type MessageEvent,
  type PluginError,
  type SendResult,
  type StdioManifest,
} from '@host/protocol';

/** Lines of stderr kept for the report (the newest), and the longest kept line. */
const STDERR_TAIL_LINES = 12;
const STDERR_LINE_CHARS = 300;
/** Most plugin-to-host calls and events one run records; a plugin that floods the pipe cannot grow the runner beyond it. */
const MAX_RECORDS = 10_000;
/** How many bytes of a polluted chunk the report shows. */
const SHOWN_BYTES = 120;

/** A JSON-RPC answer as the runner saw it. */
export interface Answer {
  at: number;
  /** Set when no answer can come: the process exited first. */
  lost?: string;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** One messages.reply or messages.send call of the plugin. */
export interface ReplyRecord {
  at: number;
  format: string;
  targetType: string | undefined;
  /** The documented error the host pieces answered with, when they refused the message. */
  refusal?: { rpcCode: number; code: string | undefined };
}

/** What happened to one delivered event. */
export interface EventTrack {
  eventId: string;
  /** The event as the host routes it: a message event, or the message-shaped copy of `chat`. */
  event: MessageEvent;
  /** An event of another type, sent with events.deliver. */
  chat?: ChatEvent;
  label: string;
  sentAt: number;
  ack?: Answer;
  completions: { at: number; error: PluginError | null }[];
  replies: ReplyRecord[];
  /** The host's answer to the first reply is held back while set: the handler awaits it, so it provably runs. */
  hold?: { released: Promise<void>; release: () => void; holding: boolean };
}

export interface ExitRecord {
  code: number | null;
  signal: NodeJS.Signals | null;
  at: number;
}

/**
 * How the host isolates its plugins, for a run the host makes (POST /api/plugins/{pluginId}/doctor): plain
 * data, since it crosses to the doctor's worker process. Without it, the plugin runs as the runner's own user
 * (`host-plugin doctor` on an author's machine).
 */
export interface RunIsolation {
  /** What the host's probe found at its start. */
  support: PortableIsolationSupport;
  /** The host's settings, with `request` the mode its plugins run in (never `auto`). */
  settings: IsolationSettings;
  /** The host's state folder (its data directory is the parent). */
  stateDir: string;
  /** The plugin's uid, as the host chose it for the plugin's runs (own-user and sandbox). */
  uid?: number;
}

export interface RunOptions {
  /** The plugin's folder: the installed (or unpacked) package. */
  packageDir: string;
  manifest: StdioManifest;
  /** A temporary folder for the plugin's data, config and cache folders; never the real ones. */
  scratchDir: string;
  hostStdio: boolean;
  hostEnv: NodeJS.ProcessEnv;
  hostVersion: string;
  /**
   * Where the run's process group is written down while it runs (see ProcessGroups): a host killed outright
   * during a doctor run ends the group at its next start.
   */
  processRecordFile?: string;
  /** Run the plugin as the host runs it (see RunIsolation). */
  isolation?: RunIsolation;
}

/** A log store that keeps nothing: the runner shows stderr itself, and log.write lines only need an answer. */
const DISCARD_LOGS: PluginLogStore = {
  append: () => undefined,
  tail: async () => [] as LogLine[],
  flush: async () => undefined,
};

/**
 * One start of the plugin under test, as the host starts it: the manifest's
 * command resolved by the host's own resolveLaunch, the host's environment
 * allow-list (buildEnvironment), a new process group (LocalProcessRunner),
 * strict framing (the protocol's FrameDecoder), and the host's own handler of
 * plugin-to-host requests (token, params, permission checks). The host side
 * is scripted by the scenario runner; everything the plugin writes is
 * recorded for the checks.
 */
export class PluginRun {
  readonly token = randomBytes(32).toString('base64url');
  readonly instanceId = randomUUID();
  readonly directories: PluginDirectories;
  readonly pluginId: string;
  private readonly groups: ProcessGroups;
  private child: RunningProcess | null = null;
  private readonly decoder = new FrameDecoder(LIMITS);
  private nextId = 1;
  private readonly pending = new Map<number, (answer: Answer) => void>();
  private readonly waiters = new Set<() => void>();
  /** Set by dispose: nothing is started any more. */
  private disposed = false;
  /** Ends each pending waitFor with false (dispose). */
  private readonly giveUps = new Set<() => void>();
  readonly events = new Map<string, EventTrack>();
  stdoutBytes = 0;
  stderrBytes = 0;
  readonly stderrTail: string[] = [];
  /** The first bytes on stdout that were not a frame. */
  pollution: { code: string; message: string; bytes: string } | null = null;
  exit: ExitRecord | null = null;
  spawnError: string | null = null;
  /** How the process was isolated (the runtime's summary), when the run isolates it. */
  isolation: string | undefined;
  /** Violations of the checks observed over the whole run, by check id. */
  readonly observed = new Map<string, string[]>();
  /** Answers to requests the runner never sent (for example to a notification). */
  readonly strayAnswers: string[] = [];
  private records = 0;
  /** Plugin-to-host requests received. */
  calls = 0;
  private readonly handle: (method: string, params: unknown) => Promise<unknown>;
  private sentNothingBefore = true;

  constructor(private readonly o: RunOptions) {
    this.groups = new ProcessGroups(o.processRecordFile);
    this.pluginId = o.manifest.pluginId;
    const root = o.scratchDir;
    this.directories = {
      pluginDirectory: o.packageDir,
      pluginDataDirectory: join(root, 'data'),
      pluginConfigDirectory: join(root, 'config'),
      pluginCacheDirectory: join(root, 'cache'),
    };
    const sink: OutboundSink = { send: (request) => this.outbound(request) };
    this.handle = createPluginRequestHandler({
      pluginId: this.pluginId,
      token: this.token,
      permissions: o.manifest.permissions,
      logs: DISCARD_LOGS,
      sink,
      onCompleted: (eventId, error) => this.completed(eventId, error),
    });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** True when the plugin declares that it may intercept: its ACK may wait for its handler's decision. */
  get intercepts(): boolean {
    return this.o.manifest.permissions.includes('messages.intercept');
  }

  /** Starts the process; a start failure (command not found) ends the run at once and is in `spawnError`. */
  start(): void {
    if (this.disposed) {
      // The run was ended (its caller gave up): a scenario step after that starts nothing more.
      this.spawnError = 'the run was ended before this start';
      this.exit = { code: null, signal: null, at: performance.now() };
      return;
    }
    const launch = resolveLaunch(this.o.packageDir, this.o.manifest.transport.stdio);
    if (!launch.ok) {
      this.spawnError = launch.problem.message;
      this.exit = { code: null, signal: null, at: performance.now() };
      return;
    }
    for (const d of [this.directories.pluginDataDirectory, this.directories.pluginConfigDirectory, this.directories.pluginCacheDirectory])
      mkdirSync(d, { recursive: true });
    const args = this.o.hostStdio ? launch.args : launch.args.filter((a) => a !== HOST_STDIO_FLAG);
    const env = buildEnvironment(this.o.hostEnv, this.o.manifest.transport.stdio.environment, this.pluginId, this.directories);
    // The host's module containment: a Node plugin may load only files of its own package.
    const containment = new ModuleContainment(join(this.o.scratchDir, 'state'));
    env['NODE_OPTIONS'] = containment.nodeOptions(env['NODE_OPTIONS']);
    let child: RunningProcess;
    try {
      child = this.runner().start({
        command: launch.command,
        args,
        cwd: launch.cwd,
        env,
        plugin: {
          pluginId: this.pluginId,
          directories: this.directories,
          network: this.o.manifest.transport.stdio.network,
          readOnly: [containment.folder],
        },
      });
    } catch (e) {
      // The mode the host runs plugins in is not available, or the plugin's folders could not be prepared for it.
      this.spawnError = `the plugin could not be started as the host starts it: ${(e as Error).message}`;
      this.exit = { code: null, signal: null, at: performance.now() };
      return;
    }
    this.isolation = child.isolation?.summary;
    this.child = child;
    child.onError((e) => {
      if (child.pid === undefined && !this.exit) {
        this.spawnError = `${launch.command} could not be started: ${e.code ?? e.message}`;
        this.exit = { code: null, signal: null, at: performance.now() };
        this.wake();
      }
    });
    child.onExit((code, signal) => {
      this.exit = { code, signal, at: performance.now() };
      for (const resolve of this.pending.values()) resolve({ at: performance.now(), lost: 'the process exited before answering' });
      this.pending.clear();
      this.wake();
    });
    // A plugin that is gone cannot read; what the runner still writes is lost, not an error of the runner.
    child.stdin.on('error', () => undefined);
    const splitter = new LineSplitter((line) => {
      this.stderrTail.push(line.length > STDERR_LINE_CHARS ? `${line.slice(0, STDERR_LINE_CHARS)}...` : line);
      if (this.stderrTail.length > STDERR_TAIL_LINES) this.stderrTail.shift();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderrBytes += chunk.length;
      splitter.push(chunk);
    });
    child.stderr.on('end', () => splitter.end());
    child.stdout.on('data', (chunk: Buffer) => this.onStdout(chunk));
  }

  /** As the host starts its plugins (isolation), or a process of the runner's own user in its own process group. */
  private runner(): ProcessRunner {
    const i = this.o.isolation;
    if (!i) return new LocalProcessRunner(this.groups);
    return new IsolatingProcessRunner(this.groups, restoreSupport(i.support), i.settings, i.stateDir, {
      ...(i.uid !== undefined ? { uidOf: () => i.uid! } : {}),
      // Own users search their way to the scenario's folders (the scratch folder is 0700 otherwise).
      openRoots: [dirname(this.o.scratchDir)],
    });
  }

  private onStdout(chunk: Buffer): void {
    this.stdoutBytes += chunk.length;
    if (this.pollution) return;
    for (const ev of this.decoder.push(chunk)) {
      if (ev.kind === 'error') {
        const shown = JSON.stringify(firstLine(Buffer.from(ev.bytes ?? chunk)).toString('utf8'));
        this.pollution = { code: ev.code, message: ev.message, bytes: shown };
        this.note('stdout.frames-only', `stdout carried ${shown}, which is not a frame (${ev.code}: ${ev.message})`);
        this.wake();
        return;
      }
      this.onMessage(ev.message).catch((e: unknown) =>
        this.note('stdout.frames-only', `the host side could not handle a message the plugin wrote: ${String(e)}`),
      );
    }
    this.wake();
  }

  private async onMessage(message: JsonRpcMessage): Promise<void> {
    if (++this.records > MAX_RECORDS) return;
    if ('method' in message) {
      if (this.sentNothingBefore) this.note('handshake.valid', `the plugin sent ${message.method} before it received host.initialize`);
      if (message.id === undefined) return; // every v2 method is a request; an unknown notification is ignored
      this.calls++;
      const answer = await this.handle(message.method, message.params);
      if (answer instanceof Error && typeof (answer as { code?: unknown }).code === 'number') {
        const e = answer as Error & { code: number; data?: unknown };
        if (e.code === RpcErrorCode.Unauthorized)
          this.note('events.reply-token', `${message.method} was refused: its params.token is not the runtime token from host.initialize`);
        this.write({ jsonrpc: '2.0', id: message.id, error: { code: e.code, message: e.message, ...(e.data ? { data: e.data } : {}) } });
      } else this.write({ jsonrpc: '2.0', id: message.id, result: answer });
      return;
    }
    const id = message.id;
    const resolve = typeof id === 'number' ? this.pending.get(id) : undefined;
    if (!resolve) {
      this.strayAnswers.push(`an answer with id ${JSON.stringify(id)}, which names no request the host sent`);
      this.wake();
      return;
    }
    this.pending.delete(id as number);
    resolve({ at: performance.now(), ...(message.error ? { error: message.error } : { result: message.result }) });
    this.wake();
  }

  /** The host side of messages.reply / messages.send: the event's own target, rendered by the host's renderer. */
  private async outbound(request: OutboundRequest): Promise<SendResult> {
    const track = request.eventId !== undefined ? this.events.get(request.eventId) : undefined;
    const format = request.message.format ?? 'text';
    if (request.kind === 'reply' && !track) {
      this.note('events.reply-token', `messages.reply named eventId ${JSON.stringify(request.eventId)}, which was not delivered to it`);
      throw { code: 'message.reference.unknown', message: 'No event with this eventId was delivered to this plugin.' };
    }
    const permission = request.kind === 'reply' ? 'messages.reply' : 'messages.send';
    if (!this.o.manifest.permissions.includes(permission))
      throw { code: 'message.permission.denied', message: `${permission} is not declared in manifest.json`, details: { permission } };
    const target =
      request.kind === 'reply' && track
        ? {
            type: (track.event.messageReference.targetType as SendResult['target']['type']) ?? 'group',
            id: track.event.messageReference.targetId,
          }
        : request.target!;
    const record: ReplyRecord = { at: performance.now(), format, targetType: target.type };
    if (track && request.kind === 'reply' && takesNoReply(track.event.messageReference.messageId)) {
      // An event that takes no reply (bot.removed): refused as a provider refuses it, once recorded.
      record.refusal = { rpcCode: RpcErrorCode.MessageRejected, code: 'message.reference.unavailable' };
      track.replies.push(record);
      this.wake();
      throw {
        code: 'message.reference.unavailable',
        message: `event ${track.eventId} (${track.chat?.eventType ?? track.event.eventType}) takes no reply`,
      };
    }
    if (track) {
      if (!track.ack && !this.intercepts) this.note('events.decision-first', `event ${track.eventId}: messages.reply came before the ACK`);
      track.replies.push(record);
    }
    this.wake();
    if (track?.hold && track.replies.length === 1) {
      track.hold.holding = true;
      this.wake();
      await track.hold.released;
      track.hold.holding = false;
    }
    const rendered = renderParsedMessage('qqbot', { format, parts: request.message.parts } as never, target);
    if (!rendered.ok) {
      record.refusal = { rpcCode: RpcErrorCode.MessageRejected, code: rendered.error.code };
      throw { code: rendered.error.code, message: rendered.error.message };
    }
    return { accepted: true, messageId: `conformance-${randomUUID()}`, target };
  }

  private completed(eventId: string, error: PluginError | null): boolean {
    const track = this.events.get(eventId);
    if (!track) {
      this.note('events.reply-token', `events.completed named eventId ${JSON.stringify(eventId)}, which was not delivered to it`);
      return false;
    }
    if (!track.ack) this.note('events.decision-first', `event ${eventId}: events.completed came before the ACK`);
    track.completions.push({ at: performance.now(), error });
    this.wake();
    return track.completions.length === 1;
  }

  /** Adds a violation of a check observed over the whole run (each distinct text once, a bounded list). */
  note(check: string, text: string): void {
    const list = this.observed.get(check) ?? [];
    if (list.length < 20 && !list.includes(text)) list.push(text);
    this.observed.set(check, list);
  }

  private write(message: unknown): void {
    if (!this.child || this.exit) return;
    this.child.stdin.write(encodeFrame(message));
  }

  /** Writes bytes as they are (a malformed frame). */
  writeRaw(text: string): void {
    this.sentNothingBefore = false;
    if (this.child && !this.exit) this.child.stdin.write(Buffer.from(text, 'utf8'));
  }

  /** Sends a request; the promise settles with the answer, or never (the caller bounds the wait). */
  request(method: string, params: unknown, onAnswer?: (answer: Answer) => void): Promise<Answer> {
    this.sentNothingBefore = false;
    const id = this.nextId++;
    // onAnswer runs at once, in stdout order, before anything that followed the answer on the pipe.
    const answer = new Promise<Answer>((resolve) =>
      this.pending.set(id, (a) => {
        onAnswer?.(a);
        resolve(a);
        this.wake();
      }),
    );
    this.write({ jsonrpc: '2.0', id, method, params });
    return answer;
  }

  notify(method: string, params: unknown): void {
    this.sentNothingBefore = false;
    this.write({ jsonrpc: '2.0', method, params });
  }

  /** Sends events.message and tracks what follows it. */
  deliver(event: MessageEvent, label: string, hold: boolean): EventTrack {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const track: EventTrack = {
      eventId: event.eventId,
      label,
      event,
      sentAt: performance.now(),
      completions: [],
      replies: [],
      ...(hold ? { hold: { released, release, holding: false } } : {}),
    };
    this.events.set(event.eventId, track);
    void this.request(Methods.message.method, event, (answer) => {
      track.ack = answer;
      this.wake();
    });
    return track;
  }

  /** Sends events.deliver with an event of another type and tracks what follows it, as `deliver` does. */
  deliverChat(chat: ChatEvent, label: string): EventTrack {
    const track: EventTrack = {
      eventId: chat.eventId,
      label,
      event: routableEvent(chat),
      chat,
      sentAt: performance.now(),
      completions: [],
      replies: [],
    };
    this.events.set(chat.eventId, track);
    void this.request(Methods.deliver.method, chat, (answer) => {
      track.ack = answer;
      this.wake();
    });
    return track;
  }

  closeStdin(): void {
    this.child?.stdin.end();
  }

  /** True while any process of the plugin's run is alive: its process group, or a process that left it but carries the run's marker. */
  groupAlive(): boolean {
    return this.child?.descendantsAlive() ?? false;
  }

  /**
   * Resolves when `ready()` is true, or false after `ms` or when the run
   * cannot go on (the process exited or polluted stdout, unless `ready`
   * accepts that).
   */
  waitFor(ready: () => boolean, ms: number, opts: { untilExit?: boolean } = {}): Promise<boolean> {
    const dead = () => !opts.untilExit && (this.exit !== null || this.pollution !== null);
    if (ready()) return Promise.resolve(true);
    if (dead()) return Promise.resolve(false);
    return new Promise((resolve) => {
      const check = () => {
        if (ready()) finish(true);
        else if (dead()) finish(false);
      };
      const timer = setTimeout(() => finish(false), ms);
      const giveUp = () => finish(false);
      const finish = (value: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        this.giveUps.delete(giveUp);
        resolve(value);
      };
      this.waiters.add(check);
      this.giveUps.add(giveUp);
    });
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }

  /** What stderr showed last, for a report. */
  stderrSummary(): string {
    return this.stderrTail.length ? ` stderr ends with: ${this.stderrTail.slice(-3).join(' | ')}` : '';
  }

  /** Ends everything of this run: the process group, and the hook that would kill it at the runner's exit. */
  dispose(): void {
    this.disposed = true;
    for (const track of this.events.values()) track.hold?.release();
    if (this.child?.descendantsAlive()) this.child.signal('SIGKILL');
    this.groups.dispose();
    this.waiters.clear();
    // A wait still running ends now, so no timer of a disposed run (up to a handler deadline) keeps the process alive.
    for (const giveUp of [...this.giveUps]) giveUp();
  }
}

/** What a report shows of stdout that is not a frame: its first line (a stray print), at most SHOWN_BYTES. */
function firstLine(bytes: Buffer): Buffer {
  const end = bytes.indexOf(0x0a);
  return bytes.subarray(0, end >= 0 && end < SHOWN_BYTES ? end + 1 : SHOWN_BYTES);
}
