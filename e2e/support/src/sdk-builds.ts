import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { findGo, goEnv } from '@host/plugin-sdk-go/toolchain';
import { ROOT } from './host-process';

// The toolchains of the four SDKs as the suites that build plugins run them: the environment each needs, and
// a build step run without blocking the event loop.

/** The environment `dotnet` runs in: no telemetry, no banner, no first-run setup. */
export function dotnetEnv(): NodeJS.ProcessEnv {
  return { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1', DOTNET_SKIP_FIRST_TIME_EXPERIENCE: '1' };
}

/**
 * The environment of a Go build, offline, with `go` (default: the Go 1.23+ that findGo finds) also named by
 * HOST_PLUGIN_GO for `host-plugin pack`.
 */
export function goPackEnv(go = findGo()): NodeJS.ProcessEnv {
  return { ...goEnv(go), HOST_PLUGIN_GO: go };
}

/**
 * Links the workspace's Node SDK into a plugin project as `npm install` of its dependency would
 * (node_modules/@host/plugin-sdk-v2), so its build and `host-plugin pack` find it.
 */
export function linkWorkspaceNodeSdk(project: string): void {
  mkdirSync(join(project, 'node_modules/@host'), { recursive: true });
  symlinkSync(join(ROOT, 'libs/plugin-sdk'), join(project, 'node_modules/@host/plugin-sdk-v2'), 'dir');
}

/**
 * Runs a build step and resolves with its output, failing with it when the step fails. It does not block the
 * event loop: a long synchronous build would leave the admin API's keep-alive socket closed by the host but not
 * yet seen as closed, and the next request would be written into it.
 */
export function runToolAsync(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((ok, fail) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', fail);
    child.on('exit', (code) => (code === 0 ? ok(output) : fail(new Error(`${cmd} ${args.join(' ')} failed (${code}):\n${output}`))));
  });
}
