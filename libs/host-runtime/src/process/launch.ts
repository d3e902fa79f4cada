import { isAbsolute, resolve } from 'node:path';
import type { StdioLaunch } from '@host/protocol';
import { packagePath } from '@host/protocol/node';

/** Host environment variables a plugin process inherits; nothing else of the host's leaks in. */
export const INHERITED_ENVIRONMENT = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'] as const;
/** Extra variables Windows needs to start processes and resolve commands. */
export const INHERITED_ENVIRONMENT_WINDOWS = ['SYSTEMROOT', 'COMSPEC', 'PATHEXT', 'WINDIR'] as const;

export interface PluginDirectories {
  pluginDirectory: string;
  pluginDataDirectory: string;
  pluginConfigDirectory: string;
  pluginCacheDirectory: string;
}

export interface LaunchPlan {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

export type LaunchProblem = { code: 'PLUGIN_WORKDIR_INVALID' | 'PLUGIN_COMMAND_NOT_FOUND'; message: string };

/**
 * Builds the child environment: the allow-listed host variables, then the
 * manifest's `environment`, then the HOST_PLUGIN_* variables (which the manifest
 * cannot override). Secrets of the host, such as its admin token, are not on
 * the allow-list and so never reach a plugin.
 */
export function buildEnvironment(
  hostEnv: NodeJS.ProcessEnv,
  manifestEnv: Record<string, string>,
  pluginId: string,
  dirs: PluginDirectories,
  platform: NodeJS.Platform = process.platform,
): Record<string, string> {
  const names: readonly string[] =
    platform === 'win32' ? [...INHERITED_ENVIRONMENT, ...INHERITED_ENVIRONMENT_WINDOWS] : INHERITED_ENVIRONMENT;
  const env: Record<string, string> = {};
  // Windows variable names are case-insensitive (Path, SystemRoot).
  const lookup = new Map<string, string>();
  for (const [k, v] of Object.entries(hostEnv)) if (v !== undefined) lookup.set(platform === 'win32' ? k.toUpperCase() : k, v);
  for (const name of names) {
    const value = lookup.get(name);
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, manifestEnv);
  env['HOST_PLUGIN_ID'] = pluginId;
  env['HOST_PLUGIN_DIR'] = dirs.pluginDirectory;
  env['HOST_PLUGIN_DATA_DIR'] = dirs.pluginDataDirectory;
  env['HOST_PLUGIN_CONFIG_DIR'] = dirs.pluginConfigDirectory;
  env['HOST_PLUGIN_CACHE_DIR'] = dirs.pluginCacheDirectory;
  return env;
}

/**
 * Resolves the manifest's start command. The working directory must stay
 * inside the package. A command with a path separator (`./bin/plugin`,
 * `bin/plugin`) names a file in the package; a bare name (`node`, `python3`)
 * is looked up on PATH by the operating system, without a shell; an absolute
 * path is used as is.
 */
export function resolveLaunch(
  packageDir: string,
  stdio: StdioLaunch,
): { ok: true; command: string; args: string[]; cwd: string } | { ok: false; problem: LaunchProblem } {
  const root = resolve(packageDir);
  // The installer's package checks use the same packagePath, so a package that installs also starts.
  const workdir = packagePath(stdio.workingDirectory);
  if (workdir === undefined) {
    return {
      ok: false,
      problem: {
        code: 'PLUGIN_WORKDIR_INVALID',
        message: `workingDirectory "${stdio.workingDirectory}" is outside the package; use "." or a folder inside the package`,
      },
    };
  }
  const cwd = resolve(root, workdir);
  let command = stdio.command;
  // An absolute command is the operator's explicit choice of interpreter and is used as is.
  if (/[\\/]/.test(command) && !isAbsolute(command)) {
    // Like the OS and interpreters resolve args: relative to the working directory (spec, "transport.stdio").
    const file = packagePath(workdir, command);
    if (file === undefined) {
      return {
        ok: false,
        problem: { code: 'PLUGIN_COMMAND_NOT_FOUND', message: `command "${stdio.command}" points outside the package` },
      };
    }
    command = resolve(root, file);
  }
  return { ok: true, command, args: [...stdio.args], cwd };
}
