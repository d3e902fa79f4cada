import { HostError } from '@host/host-core';
import { HOST_STDIO_FLAG, type StdioManifest } from '@host/protocol';
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
export function checkPackage(
  manifest: StdioManifest,
  files: { entry: Pick<ArchiveEntry, 'isDirectory'>; path: string }[],
): string | undefined {
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
  const base = commandBase(command);
  const script = args.find((a) => !a.startsWith('-'));
  if (INTERPRETERS.has(base) && script !== undefined && args[0] === script && SCRIPT_EXTENSIONS.test(script)) {
    const resolved = packagePath(workdir, script);
    if (resolved === undefined || !fileSet.has(resolved)) missing(script, `The ${base} entry script`);
  }
  return commandFile;
}

/**
 * What the package may get wrong without being refused: start arguments
 * without --host-stdio (an SDK plugin then prints its help and exits).
 */
export function packageWarnings(manifest: StdioManifest): string[] {
  const { args } = manifest.transport.stdio;
  if (args.includes(HOST_STDIO_FLAG)) return [];
  return [
    `transport.stdio.args ${JSON.stringify(args)} lack ${HOST_STDIO_FLAG}: an SDK plugin started without it prints its help and exits. Unless this plugin speaks the protocol without it, add "${HOST_STDIO_FLAG}" to transport.stdio.args in manifest.json.`,
  ];
}

/** Node runtimes, which resolve bare imports through node_modules folders. */
const NODE_RUNTIMES = new Set(['node', 'nodejs', 'bun']);

/**
 * A Node package must ship what its package.json `dependencies` name: Node
 * looks for `node_modules/<name>` from the entry script's folder upwards, and
 * outside the package there is nothing it may count on. The package.json read
 * is the nearest one to the entry script (or the working directory) inside the
 * package; `read` returns a file's text (undefined when it cannot be read).
 * `files` may list an archive's entries or a folder's files (the doctor's
 * check of an unpacked package).
 */
export function checkNodeDependencies<E extends Pick<ArchiveEntry, 'isDirectory'>>(
  manifest: StdioManifest,
  files: { entry: E; path: string }[],
  read: (entry: E) => string | undefined,
): void {
  const { command, args, workingDirectory } = manifest.transport.stdio;
  const base = commandBase(command);
  if (!NODE_RUNTIMES.has(base)) return;
  const workdir = packagePath(workingDirectory) ?? '';
  const script = args.find((a) => !a.startsWith('-'));
  const scriptPath = script !== undefined && args[0] === script ? packagePath(workdir, script) : undefined;
  const start = scriptPath !== undefined ? scriptPath.split('/').slice(0, -1).join('/') : workdir;
  const byPath = new Map(files.filter((f) => !f.entry.isDirectory).map((f) => [f.path, f.entry]));
  const chain: string[] = [];
  for (let dir = start; ; dir = dir.split('/').slice(0, -1).join('/')) {
    chain.push(dir);
    if (dir === '') break;
  }
  const join = (dir: string, name: string) => (dir === '' ? name : `${dir}/${name}`);
  const at = chain.findIndex((dir) => byPath.has(join(dir, 'package.json')));
  if (at < 0) return;
  const pkgPath = join(chain[at]!, 'package.json');
  let dependencies: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(read(byPath.get(pkgPath)!) ?? 'null') as { dependencies?: unknown } | null;
    if (parsed && typeof parsed.dependencies === 'object' && parsed.dependencies !== null)
      dependencies = parsed.dependencies as Record<string, unknown>;
  } catch {
    return;
  }
  const lookedIn = chain.slice(at);
  const missing = Object.keys(dependencies).filter(
    (name) => !lookedIn.some((dir) => byPath.has(join(dir, `node_modules/${name}/package.json`))),
  );
  if (missing.length === 0) return;
  const names = missing.map((n) => `"${n}"`).join(', ');
  throw new HostError(
    'INSTALL_DEPENDENCY_MISSING',
    `${pkgPath} declares ${missing.length === 1 ? 'dependency' : 'dependencies'} ${names}, but the package has no ${missing.length === 1 ? `node_modules/${missing[0]}` : 'node_modules folder for them'}; the plugin could not load ${missing.length === 1 ? 'it' : 'them'} on this host. Pack with "npx host-plugin pack" (it includes the production node_modules), or bundle them into the entry file and remove them from "dependencies".`,
    { packageJson: pkgPath, missing },
  );
}

function commandBase(command: string): string {
  return command
    .replace(/\\/g, '/')
    .split('/')
    .pop()!
    .replace(/\.exe$/i, '')
    .toLowerCase();
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
