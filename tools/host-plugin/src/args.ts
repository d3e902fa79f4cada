import { CliError } from './errors';

export interface ParsedArgs {
  positional: string[];
  /** Flag values; repeated flags keep every value in order. */
  flags: Map<string, string[]>;
}

/**
 * Parses `--name value`, `--name=value` and boolean `--name`. `booleans` are
 * the flags that take no value; anything else unknown is a usage error, so a
 * typo is reported instead of ignored.
 */
export function parseArgs(argv: readonly string[], valued: readonly string[], booleans: readonly string[]): ParsedArgs {
  const positional: string[] = [];
  const flags = new Map<string, string[]>();
  const add = (name: string, value: string) => flags.set(name, [...(flags.get(name) ?? []), value]);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    if (booleans.includes(name)) {
      if (eq >= 0) throw new CliError('CLI_USAGE', `--${name} takes no value`);
      add(name, 'true');
    } else if (valued.includes(name)) {
      const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined) throw new CliError('CLI_USAGE', `--${name} needs a value`);
      add(name, value);
    } else {
      const known = [...valued, ...booleans].map((f) => `--${f}`).join(', ') || 'none';
      throw new CliError('CLI_USAGE', `unknown option --${name} (this command takes: ${known})`);
    }
  }
  return { positional, flags };
}

export function flag(args: ParsedArgs, name: string): string | undefined {
  const values = args.flags.get(name);
  return values?.[values.length - 1];
}
