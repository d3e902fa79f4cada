import { existsSync } from 'node:fs';

/**
 * The isolation modes (`HOST_PLUGIN_ISOLATION`) this machine offers a host, weakest first: `same-user`
 * everywhere, `own-user` for a host running as root on Linux, `sandbox` when bubblewrap is installed too.
 * Suites that must hold in every mode run once per entry.
 */
export function isolationModesHere(): string[] {
  const root = process.platform === 'linux' && process.getuid?.() === 0;
  const hasBwrap = ['/usr/bin/bwrap', '/bin/bwrap'].some((f) => existsSync(f));
  return ['same-user', ...(root ? ['own-user'] : []), ...(root && hasBwrap ? ['sandbox'] : [])];
}
