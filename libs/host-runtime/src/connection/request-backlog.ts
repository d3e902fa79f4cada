import { Message, type MessageStrategy } from 'vscode-jsonrpc/node';

/**
 * The plugin requests vscode-jsonrpc has received but not started yet.
 *
 * vscode-jsonrpc starts one queued request per event-loop turn (each through
 * its own setImmediate), so the answers to a burst of requests are written one
 * turn apart, and each write to the pipe wakes the plugin for a single frame.
 * The reader counts requests in, the connection's message strategy counts them
 * out, and the writer holds its frames while more answers are due within the
 * next turns (see FramedMessageWriter), so a burst leaves in one write.
 */
export class RequestBacklog {
  private waiting = 0;
  private startCount = 0;

  /** The reader saw a request go to the connection. */
  received(message: Message): void {
    if (Message.isRequest(message)) this.waiting++;
  }

  /** Requests received and not started yet. */
  get pending(): number {
    return this.waiting;
  }

  /** How many requests were started so far; the writer uses it to see progress. */
  get starts(): number {
    return this.startCount;
  }

  /** The `messageStrategy` option of the connection: counts each request as vscode-jsonrpc starts it. */
  readonly strategy: MessageStrategy = {
    handleMessage: (message, next) => {
      if (Message.isRequest(message)) {
        // A plugin reusing a request id replaces the queued one, so the count
        // can run ahead of the queue; it never goes below zero.
        if (this.waiting > 0) this.waiting--;
        this.startCount++;
      }
      return next(message);
    },
  };
}
