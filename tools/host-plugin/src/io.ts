import { createInterface } from 'node:readline/promises';

/** Where the CLI reads and writes; tests pass their own. */
export interface CliIO {
  readonly cwd: string;
  out(text: string): void;
  err(text: string): void;
  /** True when a person can answer questions (stdin and stdout are terminals). */
  readonly interactive: boolean;
  /** Asks one question; only called when `interactive`. */
  ask(question: string): Promise<string>;
}

export function processIO(): CliIO {
  return {
    cwd: process.cwd(),
    out: (text) => void process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
    err: (text) => void process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
    interactive: Boolean(process.stdin.isTTY && process.stdout.isTTY),
    async ask(question) {
      const rl = createInterface({ input: process.stdin, output: process.stdout });
      try {
        return (await rl.question(question)).trim();
      } finally {
        rl.close();
      }
    },
  };
}
