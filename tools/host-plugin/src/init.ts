import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { PluginId } from '@host/protocol';
import { SDK_VERSION } from '@host/plugin-sdk-v2';
import { CliError } from './errors';
import type { CliIO } from './io';
import { copyCsharpSdk, csharpAssemblyName, csharpProjectFiles } from './csharp';
import { copyGoSdk, goProjectFiles } from './go';
import { copyPythonSdk, pythonProjectFiles } from './python';
import { projectFiles, type InitOptions } from './templates';

export interface InitFlags {
  id?: string;
  name?: string;
  author?: string;
  description?: string;
  sdk?: string;
  force?: boolean;
  intercepts?: boolean;
  /** node (default), python, go or csharp. */
  lang?: string;
}

/**
 * Where the SDK and this CLI come from. Published packages resolve from the
 * registry (`^2.0.0`); a CLI run from a checkout of the host repository
 * (tools/host-plugin/dist/cli.cjs beside libs/plugin-sdk) points the new
 * project at that checkout with `file:` links, so `npm install` works before
 * anything is published.
 */
export function packageSources(cliDir: string = __dirname): { sdk: string; cli: string } {
  const root = resolve(cliDir, '..', '..', '..');
  const sdkDir = join(root, 'libs', 'plugin-sdk');
  const cliPackage = join(root, 'tools', 'host-plugin');
  if (
    existsSync(join(sdkDir, 'package.json')) &&
    existsSync(join(cliPackage, 'package.json')) &&
    !cliDir.split(/[\\/]/).includes('node_modules')
  ) {
    return { sdk: `file:${sdkDir}`, cli: `file:${cliPackage}` };
  }
  return { sdk: `^${SDK_VERSION}`, cli: `^${SDK_VERSION}` };
}

function defaults(dir: string): InitOptions {
  const base = basename(resolve(dir));
  const slug =
    base
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^[^a-z]+|-+$/g, '') || 'plugin';
  return {
    pluginId: `com.example.${slug}`,
    name: base.replace(/[-_]+/g, ' ').replace(/\b\w/g, (c) => c.toUpperCase()) || 'Plugin',
    author: 'Unknown',
    description: 'Echoes commands back, mentioning the sender.',
    ...packageSources(),
  };
}

/** Scaffolds a TypeScript plugin project in `dir`; asks for the identity on a terminal. */
export async function init(dir: string, flags: InitFlags, io: CliIO): Promise<string[]> {
  const target = resolve(io.cwd, dir);
  if (existsSync(target) && readdirSync(target).length > 0 && !flags.force) {
    throw new CliError('INIT_TARGET_NOT_EMPTY', `${target} already has files`);
  }
  const lang = flags.lang ?? 'node';
  if (lang !== 'node' && lang !== 'python' && lang !== 'go' && lang !== 'csharp')
    throw new CliError('CLI_USAGE', `--lang ${lang} is not known; use node, python, go or csharp`);
  const d = defaults(target);
  const ask = async (question: string, given: string | undefined, fallback: string) =>
    given ?? (io.interactive ? (await io.ask(`${question} (${fallback}): `)) || fallback : fallback);
  const options: InitOptions = {
    pluginId: await ask('Plugin id', flags.id, d.pluginId),
    name: await ask('Display name', flags.name, d.name),
    author: await ask('Author', flags.author, d.author),
    description: flags.description ?? d.description,
    sdk: flags.sdk ?? d.sdk,
    cli: d.cli,
    intercepts: flags.intercepts ?? false,
  };
  const id = PluginId.safeParse(options.pluginId);
  if (!id.success) throw new CliError('INIT_PLUGIN_ID_INVALID', `"${options.pluginId}" ${id.error.issues[0]?.message ?? 'is invalid'}`);
  if (lang !== 'node' && (flags.sdk !== undefined || flags.intercepts)) {
    throw new CliError('CLI_USAGE', '--sdk and --intercepts apply to Node.js projects only');
  }
  const files =
    lang === 'python'
      ? pythonProjectFiles(options)
      : lang === 'go'
        ? goProjectFiles(options)
        : lang === 'csharp'
          ? csharpProjectFiles(options)
          : projectFiles(options);
  let copied: string[] = [];
  if (lang === 'python') {
    mkdirSync(target, { recursive: true });
    copyPythonSdk(target);
  }
  if (lang === 'go') {
    mkdirSync(target, { recursive: true });
    copyGoSdk(target);
  }
  if (lang === 'csharp') {
    mkdirSync(target, { recursive: true });
    copied = copyCsharpSdk(target);
  }
  for (const [path, content] of files) {
    const file = join(target, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  io.out(`Created ${options.pluginId} in ${target}:`);
  for (const path of [...files.keys(), ...copied]) io.out(`  ${path}`);
  io.out('\nNext:');
  io.out(`  cd ${dir}`);
  if (lang === 'csharp') {
    const asm = csharpAssemblyName(options.pluginId);
    io.out(`  dotnet test tests/${asm}.Tests`);
    io.out(`  dotnet publish -c Release     # or host-plugin pack; writes artifacts/${asm}.zip`);
    return [...files.keys(), ...copied];
  }
  if (lang === 'go') {
    io.out('  go test ./...');
    io.out(
      '  go run plugin-host.dev/sdk-go/v2/cmd/host-pack     # or host-plugin pack; writes artifacts/' +
        options.pluginId +
        '-<goos>-<goarch>.zip',
    );
    return [...files.keys(), 'sdk-go/'];
  }
  if (lang === 'python') {
    io.out('  python3 -m unittest');
    io.out('  python3 -m host_sdk_v2.pack     # or host-plugin pack; writes artifacts/' + options.pluginId + '.zip');
    return [...files.keys(), 'host_sdk_v2/'];
  }
  io.out('  npm install');
  io.out('  npm test');
  io.out('  npm run pack     # writes artifacts/' + options.pluginId + '.zip');
  return [...files.keys()];
}
