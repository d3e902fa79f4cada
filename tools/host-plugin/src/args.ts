import { parseArgs as parseTokens } from 'node:util';
import { CliError } from './errors';

export interface ParsedArgs {
  positional: string[];
  /** Flag values; repeated flags keep every value in order. */
  flags: Map<string, string[]>;
}

/**
 * Parses `--name value`, `--name=value` and boolean `--name` with
 * `node:util`'s parseArgs. `booleans` are the flags that take no value;
 * anything else unknown is a usage error, so a typo is reported instead of
 * ignored. Single-dash words (`-`, `-x`) are positionals: the CLI has no
 * short options.
 */
export function parseArgs(argv: readonly string[], valued: readonly string[], booleans: readonly string[]): ParsedArgs {
  const options = Object.fromEntries([
    ...valued.map((name) => [name, { type: 'string', multiple: true }] as const),
    ...booleans.map((name) => [name, { type: 'boolean', multiple: true }] as const),
  ]);
  // Not strict: unknown options and missing values get this CLI's own messages below.
  const { tokens } = parseTokens({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const positional: string[] = [];
  const flags = new Map<string, string[]>();
  const add = (name: string, value: string) => flags.set(name, [...(flags.get(name) ?? []), value]);
  let lastShort = -1;
  for (const token of tokens) {
    if (token.kind === 'positional') positional.push(token.value);
    else if (token.kind === 'option' && !token.rawName.startsWith('--')) {
      // `-abc` is one token per letter, all at the same index.
      if (token.index !== lastShort) positional.push(argv[token.index] as string);
      lastShort = token.index;
    } else if (token.kind === 'option') {
      const { name } = token;
      if (booleans.includes(name)) {
        if (token.inlineValue) throw new CliError('CLI_USAGE', `--${name} takes no value`);
        add(name, 'true');
      } else if (valued.includes(name)) {
        if (token.value === undefined) throw new CliError('CLI_USAGE', `--${name} needs a value`);
        add(name, token.value);
      } else {
        const known = [...valued, ...booleans].map((f) => `--${f}`).join(', ') || 'none';
        throw new CliError('CLI_USAGE', `unknown option --${name} (this command takes: ${known})`);
      }
    }
  }
  return { positional, flags };
}

export function flag(args: ParsedArgs, name: string): string | undefined {
  const values = args.flags.get(name);
  return values?.[values.length - 1];
}
