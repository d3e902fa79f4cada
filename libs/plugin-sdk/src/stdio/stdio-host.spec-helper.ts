import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { FrameDecoder, encodeFrame, type FrameEvent, type JsonRpcMessage, type JsonRpcRequest, type JsonRpcResponse } from '@host/protocol';

/**
 * The host side of a stdio connection, for tests: spawns a real plugin
 * process, writes frames to its stdin, decodes everything on its stdout with
 * the protocol's strict decoder (so any stray byte is a test failure), and
 * answers the plugin's own requests with `answer`.
 */
export class StdioHost {
  readonly child: ChildProcessWithoutNullStreams;
  /** Every frame (or framing error) the plugin wrote, in order. */
  readonly received: FrameEvent[] = [];
  stderr = '';
  /** Everything on stdout, as text. */
  stdout = '';
  /** Answers plugin-to-host requests; return undefined to leave one unanswered. */
  answer: (request: JsonRpcRequest) => { result: unknown } | { error: { code: number; message: string; data?: unknown } } | undefined = (
    request,
  ) => (request.method === 'events.completed' ? { result: { recorded: true } } : { result: { accepted: true } });
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly decoder = new FrameDecoder();
  private nextId = 1;
  private waiters: Array<() => void> = [];

  constructor(entry: string, args: string[] = ['--host-stdio']) {
    this.child = spawn(process.execPath, [entry, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (chunk: Buffer) => this.onData(chunk));
    this.child.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString('utf8')));
    // An answer to a request the plugin sent just before the test killed it meets a closed pipe (EPIPE).
    this.child.stdin.on('error', () => undefined);
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  /** Sends a request and resolves with the response. */
  async request(method: string, params?: unknown): Promise<JsonRpcResponse> {
    const id = `h${this.nextId++}`;
    this.write({ jsonrpc: '2.0', id, method, params });
    return (await this.waitFor((m) => !('method' in m) && m.id === id)) as JsonRpcResponse;
  }

  write(message: unknown): void {
    if (this.child.stdin.writable) this.child.stdin.write(encodeFrame(message));
  }

  writeRaw(bytes: string): void {
    this.child.stdin.write(bytes);
  }

  /** Messages received so far (framing errors left out). */
  get messages(): JsonRpcMessage[] {
    return this.received.flatMap((e) => (e.kind === 'message' ? [e.message] : []));
  }

  /** Resolves with the first received message that matches (already received or still to come). */
  waitFor(match: (m: JsonRpcMessage) => boolean, timeoutMs = 10_000): Promise<JsonRpcMessage> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no matching message within ${timeoutMs} ms; stderr:\n${this.stderr}`));
      }, timeoutMs);
      const check = () => {
        const found = this.messages.find(match);
        if (!found) return false;
        cleanup();
        resolve(found);
        return true;
      };
      const waiter = () => void check();
      const cleanup = () => {
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== waiter);
      };
      if (!check()) this.waiters.push(waiter);
    });
  }

  initParams(over: Record<string, unknown> = {}): Record<string, unknown> {
    return initParams(over);
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  private onData(chunk: Buffer): void {
    this.stdout += chunk.toString('utf8');
    for (const event of this.decoder.push(chunk)) {
      this.received.push(event);
      if (event.kind === 'message' && 'method' in event.message && event.message.id !== undefined) {
        const reply = this.answer(event.message);
        if (reply) this.write({ jsonrpc: '2.0', id: event.message.id, ...reply });
      }
    }
    for (const w of [...this.waiters]) w();
  }
}

/** A message event for the fixture plugin. */
export function messageEvent(eventId: string, text: string, command?: { name: string; args: string }): Record<string, unknown> {
  return {
    eventId,
    eventType: 'message.created',
    timestamp: new Date().toISOString(),
    source: 'qqbot',
    bot: { botAccountId: 'bot-1', platform: 'qqbot' },
    conversation: { type: 'group', conversationId: 'grp-1' },
    sender: { provider: 'qqbot', mentionId: 'user-1', displayName: 'Ann' },
    message: { id: `m-${eventId}`, content: text, attachments: [], mentions: [] },
    messageReference: { messageId: `m-${eventId}`, targetType: 'group', targetId: 'grp-1', restrictions: [] },
    ...(command ? { command: { ...command, word: command.name, prefix: '/' } } : {}),
  };
}

/** host.initialize params for the fixture plugin. */
export function initParams(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    supportedProtocolVersions: [2],
    instanceId: 'inst-1',
    pluginId: 'com.example.fixture',
    hostVersion: '1.0.0',
    directories: { pluginDirectory: '/p', pluginDataDirectory: '/d', pluginConfigDirectory: '/c', pluginCacheDirectory: '/t' },
    token: 't'.repeat(40),
    encoding: 'json',
    settings: { greeting: 'hi' },
    ...over,
  };
}
