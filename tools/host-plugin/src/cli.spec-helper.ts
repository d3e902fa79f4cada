import { run } from './cli';
import type { CliIO } from './io';

/** Runs the CLI in process with captured output; `answers` are given to questions in order. */
export async function cli(
  cwd: string,
  argv: string[],
  answers: string[] = [],
): Promise<{ code: number; out: string; err: string; asked: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const asked: string[] = [];
  const io: CliIO = {
    cwd,
    out: (t) => void out.push(t),
    err: (t) => void err.push(t),
    interactive: answers.length > 0,
    ask: async (q) => {
      asked.push(q);
      return answers.shift() ?? '';
    },
  };
  const code = await run(argv, io);
  return { code, out: out.join('\n'), err: err.join('\n'), asked };
}
