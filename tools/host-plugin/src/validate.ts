import { join } from 'node:path';
import { packagePath } from '@host/protocol/node';
import { resolveClosure, findPackageDir, type ResolvedPackage } from './deps';
import { CliError, cliErrorInfo, type CliErrorCode } from './errors';
import {
  HOST_STDIO_FLAG,
  SDK_PACKAGE,
  entryOf,
  isAbsoluteAnywhere,
  isDirectory,
  isFile,
  readJson,
  type Entry,
  type PackageJson,
  type PluginProject,
} from './project';

export interface Finding {
  level: 'error' | 'warning';
  /** A packaging code, or a `manifest.*` code for schema issues. */
  code: string;
  message: string;
  fix?: string;
}

export interface ProjectCheck {
  findings: Finding[];
  entry: Entry | undefined;
  /** The runtime dependency closure, when it could be resolved. */
  packages: ResolvedPackage[] | undefined;
  skippedLinks: string[];
}

function finding(level: Finding['level'], code: CliErrorCode, message: string): Finding {
  return { level, code, message, fix: cliErrorInfo(code).message };
}

/** Files a package must contain to be loadable: its `main` and the targets of `exports`. */
function declaredEntryFiles(pkg: PackageJson): string[] {
  const out = new Set<string>();
  if (typeof pkg.main === 'string') out.add(pkg.main);
  const walk = (v: unknown) => {
    if (typeof v === 'string') {
      if (v.startsWith('./') && !v.includes('*')) out.add(v);
    } else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(pkg.exports);
  return [...out];
}

/**
 * Everything `validate` checks and `pack` relies on: the manifest against the
 * protocol schema, the start command (relative paths, --host-stdio, a built
 * JavaScript entry, a working directory inside the package) and the
 * dependencies (the SDK a production dependency, installed and built, every
 * production dependency installed).
 */
export function checkProject(project: PluginProject): ProjectCheck {
  const findings: Finding[] = project.manifestIssues.map((i) => ({
    level: 'error' as const,
    code: i.code,
    message: `manifest.json${i.path ? ` ${i.path}` : ''}: ${i.message}`,
  }));
  const m = project.manifest;
  let entry: Entry | undefined;
  if (m) {
    const launch = m.transport.stdio;
    if (isAbsoluteAnywhere(launch.command))
      findings.push(finding('error', 'PACK_ABSOLUTE_PATH', `transport.stdio.command is "${launch.command}"`));
    launch.args.forEach((a, i) => {
      if (isAbsoluteAnywhere(a)) findings.push(finding('error', 'PACK_ABSOLUTE_PATH', `transport.stdio.args[${i}] is "${a}"`));
    });
    if (isAbsoluteAnywhere(launch.workingDirectory))
      findings.push(finding('error', 'PACK_ABSOLUTE_PATH', `transport.stdio.workingDirectory is "${launch.workingDirectory}"`));
    else if (packagePath(launch.workingDirectory) === undefined)
      findings.push(finding('error', 'PACK_WORKDIR_OUTSIDE', `transport.stdio.workingDirectory is "${launch.workingDirectory}"`));
    else if (!isDirectory(join(project.dir, launch.workingDirectory)))
      findings.push(finding('error', 'PACK_WORKDIR_MISSING', `${launch.workingDirectory} is not a folder of the project`));
    for (const [k, v] of Object.entries(launch.environment)) {
      if (isAbsoluteAnywhere(v))
        findings.push(
          finding('warning', 'PACK_ABSOLUTE_PATH', `transport.stdio.environment.${k} is "${v}", which may not exist on the host machine`),
        );
    }
    if (!launch.args.includes(HOST_STDIO_FLAG))
      findings.push(finding('error', 'PACK_HOST_STDIO_MISSING', `transport.stdio.args are ${JSON.stringify(launch.args)}`));
    entry = entryOf(m);
    if (entry.kind === 'unknown')
      findings.push(finding('error', 'PACK_COMMAND_UNSUPPORTED', `the start command is "${entry.command}" ${JSON.stringify(launch.args)}`));
    else if (/\.(ts|mts|cts|tsx)$/.test(entry.path))
      findings.push(finding('error', 'PACK_ENTRY_SOURCE_ONLY', `the start command runs ${entry.path}`));
    else if (!isFile(join(project.dir, entry.path)))
      findings.push(finding('error', 'PACK_ENTRY_MISSING', `${entry.path} does not exist (the start command runs it)`));
  }

  const pkg = project.packageJson;
  if (!pkg.dependencies?.[SDK_PACKAGE]) {
    const where = pkg.devDependencies?.[SDK_PACKAGE] ? 'it is only in devDependencies' : 'it is not listed';
    findings.push(finding('error', 'PACK_SDK_NOT_A_DEPENDENCY', `${SDK_PACKAGE}: ${where}`));
  }
  const sdkDir = findPackageDir(SDK_PACKAGE, project.dir);
  if (!sdkDir) findings.push(finding('error', 'PACK_SDK_NOT_INSTALLED', `${SDK_PACKAGE} is not found from ${project.dir}`));
  else {
    const sdkPkg = readJson(join(sdkDir, 'package.json')) as PackageJson;
    const absent = declaredEntryFiles(sdkPkg).filter((f) => !isFile(join(sdkDir, f)));
    if (absent.length > 0) findings.push(finding('error', 'PACK_SDK_NOT_BUILT', `${SDK_PACKAGE} lacks ${absent.join(', ')}`));
    if (m && sdkPkg.version && m.sdkVersion !== sdkPkg.version) {
      findings.push(
        finding(
          'warning',
          'PACK_SDK_VERSION_MISMATCH',
          `manifest.json says sdkVersion ${m.sdkVersion}, the installed SDK is ${sdkPkg.version}`,
        ),
      );
    }
  }

  let packages: ResolvedPackage[] | undefined;
  let skippedLinks: string[] = [];
  try {
    ({ packages, skippedLinks } = resolveClosure(project.dir, pkg));
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    findings.push(...error.details.map((d) => finding('error', error.code, `${d} is not installed`)));
  }
  if (skippedLinks.length > 0) {
    findings.push(
      finding('warning', 'PACK_LINK_SKIPPED', `left out: ${skippedLinks.slice(0, 5).join(', ')}${skippedLinks.length > 5 ? ', ...' : ''}`),
    );
  }
  return { findings, entry, packages, skippedLinks };
}

/** Prints findings; returns the number of errors. */
export function reportFindings(findings: readonly Finding[], out: (text: string) => void): number {
  for (const f of findings) {
    out(`  ${f.level === 'error' ? 'error' : 'warn '} ${f.code}: ${f.message}`);
    if (f.fix) out(`        fix: ${f.fix}`);
  }
  return findings.filter((f) => f.level === 'error').length;
}
