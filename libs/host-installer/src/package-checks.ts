import { HostError } from '@host/host-core';
import type { StdioManifest } from '@host/protocol';
import { packagePath } from '@host/protocol/node';
import type { ArchiveEntry } from './archive';

/** Interpreters whose first argument is a script that must ship in the package. */
const INTERPRETERS = new Set(['node', 'nodejs', 'python', 'python3', 'py', 'pythonw', 'deno', 'bun', 'dotnet']);
const SCRIPT_EXTENSIONS = /\.(c?js|mjs|ts|py|pyc|dll)$/i;

/**
 * Package rules beyond the manifest schema: the working directory is a folder
 * of the package, and a start command (or interpreter script) given as a
 * relative path is a file of the package. Returns the command's package path
 * when the command is a file of the package.
 */
export function checkPackage(manifest: StdioManifest, files: { entry: ArchiveEntry; path: string }[]): string | undefined {
  const { command, args, workingDirectory } = manifest.transport.stdio;
  const fileSet = new Set(files.filter((f) => !f.entry.isDirectory).map((f) => f.path));
  const dirSet = new Set<string>();
  for (const f of files) {
    const parts = f.path.split('/');
    for (let i = 1; i < parts.length; i++) dirSet.add(parts.slice(0, i).join('/'));
    if (f.entry.isDirectory) dirSet.add(f.path);
  }
  const workdir = packagePath(workingDirectory);
  if (workdir === undefined) {
    throw new HostError(
      'INSTALL_WORKDIR_OUTSIDE',
      `transport.stdio.workingDirectory "${workingDirectory}" leaves the package. Use "." or a folder inside the package.`,
      {
        workingDirectory,
      },
    );
  }
  if (workdir !== '' && !dirSet.has(workdir)) {
    throw new HostError(
      'INSTALL_WORKDIR_MISSING',
      `transport.stdio.workingDirectory "${workingDirectory}" is not a folder in the package. Include it or use ".".`,
      {
        workingDirectory,
      },
    );
  }
  const missing = (file: string, what: string): never => {
    throw new HostError(
      'INSTALL_ENTRY_MISSING',
      `${what} "${file}" is not in the package (looked for "${packagePath(workdir, file) ?? file}"). Include the built entry file and its dependencies, not only sources.`,
      { file },
    );
  };
  const isPathLike = /[\\/]/.test(command) || command.startsWith('.');
  let commandFile: string | undefined;
  if (isPathLike && !/^([\\/]|[A-Za-z]:)/.test(command)) {
    const resolved = packagePath(workdir, command);
    if (resolved === undefined) missing(command, 'The start command leaves the package:');
    if (!fileSet.has(resolved!)) missing(command, 'The start command');
    commandFile = resolved!;
  }
  const base = command
    .replace(/\\/g, '/')
    .split('/')
    .pop()!
    .replace(/\.exe$/i, '')
    .toLowerCase();
  const script = args.find((a) => !a.startsWith('-'));
  if (INTERPRETERS.has(base) && script !== undefined && args[0] === script && SCRIPT_EXTENSIONS.test(script)) {
    const resolved = packagePath(workdir, script);
    if (resolved === undefined || !fileSet.has(resolved)) missing(script, `The ${base} entry script`);
  }
  return commandFile;
}

/** This host's platform and architecture in the manifest's vocabulary. */
export function hostPlatform(platform: string = process.platform, arch: string = process.arch): { platform: string; architecture: string } {
  const p = platform === 'win32' ? 'windows' : platform === 'darwin' ? 'osx' : platform;
  const a = arch === 'ia32' ? 'x86' : arch;
  return { platform: p, architecture: a };
}

/**
 * Refuses a package whose `supportedPlatforms` leaves this host out (a Go
 * binary built for another system, say). No list means every platform; a
 * platform without `architectures` means every architecture.
 */
export function checkPlatform(manifest: StdioManifest, host = hostPlatform()): void {
  const list = manifest.supportedPlatforms;
  if (!list || list.length === 0) return;
  const fits = list.some((s) => s.platform === host.platform && (!s.architectures || s.architectures.some((a) => a === host.architecture)));
  if (!fits) {
    const supported = list.map((s) => `${s.platform}${s.architectures ? ` (${s.architectures.join(', ')})` : ''}`).join(', ');
    throw new HostError(
      'INSTALL_PLATFORM_UNSUPPORTED',
      `The package supports ${supported}, but this host is ${host.platform} (${host.architecture}). Install the package built for this system, or add it to supportedPlatforms if the plugin runs here.`,
      { supportedPlatforms: list, host },
    );
  }
}
