import { Console } from 'node:console';
import { HOST_STDIO_FLAG } from '@host/protocol';

/** The argument that makes a plugin speak the protocol (the host passes it). */
export { HOST_STDIO_FLAG };

type Write = typeof process.stdout.write;

let frameWrite: Write | undefined;

/**
 * In protocol mode stdout carries frames and nothing else: the host treats
 * any other byte there as protocol pollution and stops the plugin. So every
 * ordinary way of printing is sent to stderr instead, which the host keeps as
 * the plugin's log:
 * - `console.log/info/debug/warn/...` write to stderr;
 * - `process.stdout.write` (used by libraries directly) writes to stderr.
 * The SDK keeps the original stdout writer for frames only. This runs when
 * the SDK is first imported (if `--host-stdio` is among the arguments), which
 * is before the plugin's own module body runs, and again in `main()`.
 * Returns the frame writer.
 */
export function enterProtocolMode(): Write {
  if (frameWrite) return frameWrite;
  const stdout = process.stdout;
  const original = stdout.write.bind(stdout) as Write;
  frameWrite = original;
  const toStderr = ((chunk: unknown, encoding?: unknown, cb?: unknown) =>
    (process.stderr.write as (...args: unknown[]) => boolean)(chunk, encoding, cb)) as Write;
  stdout.write = toStderr;
  // A host that died closes the pipe: EPIPE must not crash with a stack trace;
  // the closed stdin ends the process in an orderly way.
  stdout.on('error', () => undefined);
  const quiet = new Console({ stdout: process.stderr, stderr: process.stderr });
  for (const method of [
    'log',
    'info',
    'debug',
    'warn',
    'error',
    'trace',
    'dir',
    'dirxml',
    'table',
    'group',
    'groupCollapsed',
    'groupEnd',
    'count',
    'countReset',
    'time',
    'timeEnd',
    'timeLog',
    'assert',
  ] as const) {
    (console as unknown as Record<string, unknown>)[method] = (quiet as unknown as Record<string, (...args: unknown[]) => void>)[
      method
    ]?.bind(quiet);
  }
  return original;
}

/** True when this process was started in protocol mode. */
export function isProtocolMode(argv: readonly string[] = process.argv): boolean {
  return argv.slice(2).includes(HOST_STDIO_FLAG);
}
