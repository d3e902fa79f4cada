import { readFileSync } from 'node:fs';

/**
 * When the process `pid` started, as the kernel counts it (field 22 of
 * /proc/<pid>/stat, clock ticks since boot), or undefined where /proc is not
 * available. A pid is reused after its process ends; the pair is not.
 */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count from after it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19];
  } catch {
    return undefined;
  }
}

/**
 * The state letter of the process `pid` (field 3 of /proc/<pid>/stat: R, S, D,
 * Z for a zombie, X for dead, ...), or undefined where /proc does not show it.
 */
export function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}
