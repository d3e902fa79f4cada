import { Message, type MessageStrategy } from 'vscode-jsonrpc/node';

/**
 * Messages from the plugin that may wait in vscode-jsonrpc's queue. Past the
 * high mark the reader stops reading stdout (the pipe fills and the plugin's
 * writes block); it reads again once the queue is down to the low mark. The
 * queue's memory is bounded by the high mark plus one chunk of stdout.
 */
export interface BacklogLimits {
  highWaterMark: number;
  lowWaterMark: number;
}

export const DEFAULT_BACKLOG_LIMITS: BacklogLimits = { highWaterMark: 1024, lowWaterMark: 256 };

/**
 * The plugin requests vscode-jsonrpc has received but not started yet.
 *
 * vscode-jsonrpc starts one queued request per event-loop turn (each through
 * its own setImmediate), so the answers to a burst of requests are written one
 * turn apart, and each write to the pipe wakes the plugin for a single frame.
 * The reader counts requests in, the connection's message strategy counts them
 * out, and the writer holds its frames while more answers are due within the
 * next turns (see FramedMessageWriter), so a burst leaves in one write.
 *
 * It also counts every message vscode-jsonrpc queues (requests and
 * notifications; answers are not queued), so the reader can stop reading a
 * plugin whose messages pile up (see BacklogLimits).
 */
export class RequestBacklog {
  private waiting = 0;
  private startCount = 0;
  /** Ids of queued requests: a plugin reusing an id replaces the queued request, which must not count twice. */
  private readonly queuedIds = new Set<string>();
  private queuedNotifications = 0;
  private onDrained: (() => void) | null = null;

  constructor(readonly limits: BacklogLimits = DEFAULT_BACKLOG_LIMITS) {}

  /** The reader saw a message go to the connection. */
  received(message: Message): void {
    if (Message.isRequest(message)) {
      this.waiting++;
      this.queuedIds.add(String(message.id));
    } else if (Message.isNotification(message)) this.queuedNotifications++;
  }

  /** Requests received and not started yet. */
  get pending(): number {
    return this.waiting;
  }

  /** Messages in vscode-jsonrpc's queue: requests and notifications received and not started. */
  get queued(): number {
    return this.queuedIds.size + this.queuedNotifications;
  }

  /** True when the reader should stop reading until `whenDrained` calls back. */
  get full(): boolean {
    return this.queued >= this.limits.highWaterMark;
  }

  /** Calls `resume` once, when the queue is down to the low mark. */
  whenDrained(resume: () => void): void {
    this.onDrained = resume;
    this.checkDrained();
  }

  /** Forgets the callback of `whenDrained` (the reader was disposed). */
  cancelDrainWait(): void {
    this.onDrained = null;
  }

  /** How many requests were started so far; the writer uses it to see progress. */
  get starts(): number {
    return this.startCount;
  }

  private checkDrained(): void {
    if (this.onDrained && this.queued <= this.limits.lowWaterMark) {
      const resume = this.onDrained;
      this.onDrained = null;
      resume();
    }
  }

  /** The `messageStrategy` option of the connection: counts each request as vscode-jsonrpc starts it. */
  readonly strategy: MessageStrategy = {
    handleMessage: (message, next) => {
      if (Message.isRequest(message)) {
        // A plugin reusing a request id replaces the queued one, so the count
        // can run ahead of the queue; it never goes below zero.
        if (this.waiting > 0) this.waiting--;
        this.queuedIds.delete(String(message.id));
        this.startCount++;
      } else if (Message.isNotification(message) && this.queuedNotifications > 0) this.queuedNotifications--;
      this.checkDrained();
      return next(message);
    },
  };
}
