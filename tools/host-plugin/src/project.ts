import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, posix } from 'node:path';
import { parseManifestText, parseStdioManifest, STDIO_TRANSPORT, type StdioManifest, type ValidationIssue } from '@host/protocol';
import { packagePath } from '@host/protocol/node';
import { CliError } from './errors';

export const SDK_PACKAGE = '@host/plugin-sdk-v2';
export { HOST_STDIO_FLAG } from '@host/protocol';

export interface PackageJson {
  name?: string;
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  engines?: Record<string, string>;
  main?: string;
  files?: string[];
  exports?: unknown;
  /** Packer options: extra files or folders to put in the package. */
  hostPlugin?: { include?: string[] };
}

/** A plugin project as the packer sees it. */
export interface PluginProject {
  dir: string;
  manifestPath: string;
  manifest: StdioManifest | undefined;
  /** Every schema problem of manifest.json (empty when it is valid). */
  manifestIssues: ValidationIssue[];
  packageJson: PackageJson;
}

export function readJson(file: string): unknown {
  return JSON.parse(readFileSync(file, 'utf8').replace(/^\uFEFF/, ''));
}

/** Reads manifest.json and package.json; a missing or unreadable file is a CliError. */
export function loadProject(dir: string): PluginProject {
  const manifestPath = join(dir, 'manifest.json');
  if (!existsSync(manifestPath)) throw new CliError('PACK_MANIFEST_MISSING', `${manifestPath} does not exist`);
  const text = parseManifestText(readFileSync(manifestPath, 'utf8'));
  let manifest: StdioManifest | undefined;
  let manifestIssues: ValidationIssue[];
  if (!text.ok) manifestIssues = text.issues;
  else if (describesHttpPlugin(text.value))
    throw new CliError('PACK_TRANSPORT_NOT_STDIO', `${manifestPath} has no stdio transport (it is an HTTP plugin manifest)`);
  else {
    const parsed = parseStdioManifest(text.value);
    manifest = parsed.ok ? parsed.value : undefined;
    manifestIssues = parsed.ok ? [] : parsed.issues;
  }
  const pkgPath = join(dir, 'package.json');
  let packageJson: PackageJson;
  try {
    packageJson = readJson(pkgPath) as PackageJson;
  } catch (error) {
    throw new CliError('PACK_PACKAGE_JSON_MISSING', `${pkgPath}: ${(error as Error).message}`);
  }
  return { dir, manifestPath, manifest, manifestIssues, packageJson };
}

/** An HTTP plugin manifest (capabilities and no transport), or a transport other than stdio. */
export function describesHttpPlugin(doc: unknown): boolean {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return false;
  const transport = (doc as Record<string, unknown>)['transport'];
  if (transport === undefined) return 'capabilities' in doc;
  const type = transport && typeof transport === 'object' ? (transport as Record<string, unknown>)['type'] : undefined;
  return type !== undefined && type !== STDIO_TRANSPORT;
}

/** Absolute on any platform: `/x`, `\\x`, `C:\x`, `C:/x`. */
export function isAbsoluteAnywhere(path: string): boolean {
  return isAbsolute(path) || posix.isAbsolute(path) || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\');
}

const NODE_COMMAND = /^(node|nodejs|node\.exe)$/i;

/** What the start command runs: the script node is given, or a packaged executable. */
export type Entry = { kind: 'script'; path: string } | { kind: 'executable'; path: string } | { kind: 'unknown'; command: string };

export function entryOf(manifest: StdioManifest): Entry {
  const { command, args, workingDirectory } = manifest.transport.stdio;
  if (NODE_COMMAND.test(command)) {
    const script = args.find((a) => !a.startsWith('-'));
    const path = script === undefined ? undefined : packagePath(workingDirectory, script);
    return path ? { kind: 'script', path } : { kind: 'unknown', command };
  }
  if (/[\\/]/.test(command) && !isAbsoluteAnywhere(command)) {
    const path = packagePath(workingDirectory, command);
    if (path) return { kind: 'executable', path };
  }
  return { kind: 'unknown', command };
}

export function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
