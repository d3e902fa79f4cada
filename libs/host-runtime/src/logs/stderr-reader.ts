import type { Readable } from 'node:stream';
import { LineSplitter } from './line-limits';
import type { LogRateLimiter } from './log-rate-limit';

/** How long stderr is left unread after a chunk that went over the log rate: the pipe fills, and the next read takes it whole. */
export const STDERR_OVER_RATE_PAUSE_MILLISECONDS = 100;
/** How long stderr is left unread when the plugin writes many times its log rate. */
export const STDERR_FLOOD_PAUSE_MILLISECONDS = 1_000;

/**
 * Reads a plugin's stderr into lines within its log rate, cheaply when the
 * plugin writes far more: lines past the rate are counted without being
 * decoded (LineSplitter with the limiter's gate), and after a chunk past the
 * rate the pipe is left unread for a moment, so the plugin's writes fill it
 * and the next read takes up to a whole pipe at once instead of one small
 * write at a time. A plugin writing many times its rate is left unread for a
 * second at a time. Where its writes to stderr then block, that slows only
 * that plugin; but a Node.js plugin's writes to a full pipe do not block: they
 * queue in the plugin and it goes on at full speed, taking a CPU from the host
 * and the other plugins. So `onFlood` is called (once) when the plugin first
 * writes many times its rate, for the caller to lower its CPU priority.
 */
export function readStderr(stream: Readable, limiter: LogRateLimiter, onLine: (line: string) => void, onFlood?: () => void): void {
  const splitter = new LineSplitter(onLine, undefined, limiter.gate);
  let timer: NodeJS.Timeout | null = null;
  let flooding = false;
  stream.on('data', (chunk: Buffer) => {
    splitter.push(chunk);
    if (!limiter.exhausted || timer) return;
    if (!flooding && limiter.farOver) {
      flooding = true;
      onFlood?.();
    }
    stream.pause();
    // After the process exits the pipe still resumes and drains (at most one pipe's worth is left in it).
    timer = setTimeout(
      () => {
        timer = null;
        stream.resume();
      },
      limiter.farOver ? STDERR_FLOOD_PAUSE_MILLISECONDS : STDERR_OVER_RATE_PAUSE_MILLISECONDS,
    );
    timer.unref();
  });
  stream.on('end', () => splitter.end());
}
