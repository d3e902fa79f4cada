import { HOST_STDIO_FLAG } from '@host/protocol';
import type { RuntimeErrorCode } from '@host/host-errors';
import type { FramingFailure } from '../connection/framed-reader';
import type { LimitHit } from '../isolation/settings';

/**
 * What a plugin process that ended or failed to start tells the operator: the
 * reason of a kernel limit, a start error naming what the plugin did (the
 * first error line and the tail of its stderr), and a settings refusal without
 * its stack. The process (plugin-process.ts) gathers the facts; this module
 * words them.
 */

/** How the process ended. */
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

/** Why the kernel ended a process that hit one of its isolation limits. */
export const LIMIT_REASONS: Record<LimitHit, string> = {
  memory: 'went over its memory limit and was killed by the kernel',
  cpu: 'used up its CPU time limit and was killed',
};

const STDERR_TAIL_LINES = 8;
const STDERR_TAIL_CHARS = 600;
const ERROR_LINE_CHARS = 400;
/** The line an uncaught error starts with: `Error: ...`, `TypeError: ...`, `Error [ERR_MODULE_NOT_FOUND]: ...`, `ModuleNotFoundError: ...`. */
const ERROR_LINE = /^(?:[A-Za-z_$][\w$.]*)?(?:Error|Exception)(?: \[[A-Z0-9_]+\])?: \S/;
/** A stack frame (Node's `    at ...`, Python's `  File "...", line N`): kept in the log, left out of start failure messages. */
const STACK_FRAME = /^\s+(?:at |File ")/;

/** The stderr lines a start failure quotes: the first error line, and the last lines without stack frames (bounded). */
export class StderrTail {
  private readonly lines: string[] = [];
  private errorLine: string | null = null;

  add(line: string): void {
    if (this.errorLine === null && ERROR_LINE.test(line)) this.errorLine = line.slice(0, ERROR_LINE_CHARS);
    if (STACK_FRAME.test(line)) return;
    this.lines.push(line);
    if (this.lines.length > STDERR_TAIL_LINES) this.lines.shift();
  }

  /**
   * What the process left on stderr, for start failure messages: the first
   * error line (which a long stack would push out of the tail), then the
   * last lines without stack frames.
   */
  text(): string {
    const text = this.lines.join('\n').slice(-STDERR_TAIL_CHARS);
    const first = this.errorLine && !text.includes(this.errorLine) ? `: ${this.errorLine}` : '';
    return text ? `${first}; stderr tail: ${JSON.stringify(text)}` : '; it wrote nothing to stderr';
  }
}

/** Why a process ended before it answered host.initialize: it could not be spawned, or it exited (with its stderr's tail). */
export function exitError(o: {
  spawnError: NodeJS.ErrnoException | null;
  exit: ExitInfo | null;
  command: string;
  args: readonly string[];
  stderr: StderrTail;
}): StartError {
  const e = o.spawnError;
  const command = o.command;
  if (e) {
    if (e.code === 'ENOENT') {
      const where = /[\\/]/.test(command) ? 'does not exist in the package' : 'was not found on PATH; install it on the host';
      return new StartError('PLUGIN_COMMAND_NOT_FOUND', `command "${command}" ${where}`);
    }
    if (e.code === 'EACCES') {
      return new StartError(
        'PLUGIN_COMMAND_NOT_FOUND',
        `command "${command}" is not executable; give it execute permission in the package (chmod +x)`,
      );
    }
    return new StartError('PLUGIN_START_FAILED', `command "${command}" could not be started: ${e.message}`);
  }
  const x = o.exit;
  const how = x?.signal ? `was killed by ${x.signal}` : `exited with code ${x?.code}`;
  if (!o.args.includes(HOST_STDIO_FLAG)) {
    // An SDK plugin started without the flag prints its help and exits: the fix is in the manifest.
    return new StartError(
      'PLUGIN_START_FAILED',
      `${how} before answering host.initialize: its manifest does not pass ${HOST_STDIO_FLAG}, so an SDK plugin prints its help and exits; add "${HOST_STDIO_FLAG}" to transport.stdio.args in manifest.json${o.stderr.text()}`,
    );
  }
  return new StartError('PLUGIN_START_FAILED', `${how} before answering host.initialize${o.stderr.text()}`);
}

/** A plugin that wrote something other than a frame to stdout (`when`: at which moment). */
export function pollutionError(p: FramingFailure, when: string): StartError {
  return new StartError(
    'PLUGIN_STDOUT_POLLUTION',
    `stdout pollution (PLUGIN_STDOUT_POLLUTION): ${when} the plugin wrote ${p.bytes} to stdout, which is not a protocol frame (${p.code}); write logs to stderr or log.write, never to stdout`,
  );
}

/** Longest reason of a refusal the operator is shown; the whole answer stays in the plugin's log. */
const MAX_REFUSAL_CHARS = 500;

/**
 * A plugin's reason for refusing settings, as an operator reads it: without a
 * stack trace (the lines from the first "    at ..." frame on, which some
 * runtimes append to an error's message) and bounded in length.
 */
export function refusalReason(message: string): string {
  const lines = message.split(/\r?\n/);
  const frame = lines.findIndex((l) => /^\s+at\s/.test(l));
  const kept = (frame === -1 ? lines : lines.slice(0, frame)).join('\n').trim();
  const text = kept || 'it gave no reason';
  return text.length > MAX_REFUSAL_CHARS ? `${text.slice(0, MAX_REFUSAL_CHARS)}…` : text;
}
