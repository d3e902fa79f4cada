import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { renderReport, runConformance } from '@host/plugin-conformance';
import { SDK_VERSION } from '@host/plugin-sdk-v2';
import { flag, parseArgs } from './args';
import { CliError } from './errors';
import { init } from './init';
import { isCsharpProject, packCsharp } from './csharp';
import { isGoProject, packGo } from './go';
import { isPythonProject, packPython, validatePython } from './python';
import type { CliIO } from './io';
import { gatherFacts, renderNotes } from './notes';
import { pack } from './pack';
import { loadProject, type PackageJson } from './project';
import { checkProject, reportFindings } from './validate';

export const CLI_VERSION = SDK_VERSION;

export const USAGE = `host-plugin ${CLI_VERSION}: create, check and package protocol v2 plugins in Node.js, Python, Go or C#

Usage:
  host-plugin init <dir> [--lang node|python|go|csharp] [--id com.example.x] [--name "Name"] [--author "Me"] [--description "..."] [--sdk <version|file:path>] [--intercepts] [--force]
      Create a plugin project: TypeScript by default (manifest.json, src/plugin.ts, a test with the test host, package scripts);
      --lang python: manifest.json, plugin.py, tests/ (unittest with the test host), requirements.txt and a copy of host_sdk_v2.
      --lang go: manifest.json, go.mod, main.go, main_test.go (go test with the test host) and a copy of the Go SDK in sdk-go/.
      --lang csharp: manifest.json, <Name>.csproj, EchoPlugin.cs, Program.cs, tests/<Name>.Tests (xunit with the test host),
      nuget.config and the HostSdk package in packages/ (a local feed).
      --intercepts: the command stops lower-priority plugins (declares messages.intercept, calls ctx.intercept()).
  host-plugin validate [dir]
      Check manifest.json with the protocol schema and the package: entry built, SDK installed, relative paths, --host-stdio.
  host-plugin pack [dir] [--out <folder>] [--include <path>]...
      Validate, then write <folder>/<pluginId>.zip (default artifacts/): manifest.json, package.json, the built
      entry folder and the production node_modules. The same inputs give the same bytes.
      In a Python project (the manifest starts python3) it runs the Python packer: python3 -m host_sdk_v2.pack.
      In a Go project (manifest.json beside go.mod) it runs the Go packer for this machine (or --goos/--goarch):
      go run plugin-host.dev/sdk-go/v2/cmd/host-pack, writing <folder>/<pluginId>-<goos>-<goarch>.zip.
      In a C# project (manifest.json beside one .csproj) it runs dotnet publish -c Release, whose HostSdk targets
      write <folder>/<AssemblyName>.zip.
  host-plugin notes [dir] [--out RELEASE_NOTES.md | --stdout] [--notes notes.json] [--host-versions <range>]
                    [--node <range>] [--http --base-url <url> --security <text> --concurrency <text> --http-logs <text> --updates <text>]
      Write release notes from manifest.json; facts it cannot know come from flags, notes.json or questions.
  host-plugin doctor <package.zip | folder> [--json] [--timeout <seconds>]
      Run the protocol's conformance suite: the installer's checks, then the plugin started as the host starts it
      (any language whose runtime is on this machine). Exit 0 only when every required check passes.
      The whole run lasts at most --timeout seconds (default 60, 0 for no bound); scenarios it did not play to
      their end are reported as not played, and the run does not pass.

Options: --help, --version`;

/** Runs one command; returns the exit code (0 ok, 1 failed, 2 usage). */
export async function run(argv: readonly string[], io: CliIO): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        io.out(USAGE);
        return command === undefined ? 2 : 0;
      case '--version':
      case '-v':
        io.out(CLI_VERSION);
        return 0;
      case 'init': {
        const args = parseArgs(rest, ['id', 'name', 'author', 'description', 'sdk', 'lang'], ['force', 'intercepts']);
        const [dir] = args.positional;
        if (!dir || args.positional.length > 1) throw new CliError('CLI_USAGE', 'init takes one folder: host-plugin init <dir>');
        await init(
          dir,
          {
            id: flag(args, 'id'),
            name: flag(args, 'name'),
            author: flag(args, 'author'),
            description: flag(args, 'description'),
            sdk: flag(args, 'sdk'),
            force: args.flags.has('force'),
            intercepts: args.flags.has('intercepts'),
            lang: flag(args, 'lang'),
          },
          io,
        );
        return 0;
      }
      case 'validate': {
        const args = parseArgs(rest, [], []);
        const dir = resolve(io.cwd, one(args.positional, 'validate'));
        // A Python project has no package.json; a Node project that starts python is told it must start node.
        if (isPythonProject(dir) && !existsSync(join(dir, 'package.json'))) return validatePython(dir, io.out, io.err);
        const project = loadProject(dir);
        const m = project.manifest;
        io.out(`Validating ${m ? `${m.pluginId} ${m.version}` : 'manifest.json'} in ${project.dir}`);
        const { findings } = checkProject(project);
        const errors = reportFindings(findings, (t) => io.out(t));
        const warnings = findings.length - errors;
        io.out(
          errors === 0
            ? `ok: ready to pack${warnings ? ` (${warnings} warning${warnings === 1 ? '' : 's'})` : ''}`
            : `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`,
        );
        return errors === 0 ? 0 : 1;
      }
      case 'pack': {
        const args = parseArgs(rest, ['out', 'include', 'goos', 'goarch'], []);
        const dir = resolve(io.cwd, one(args.positional, 'pack'));
        if (isGoProject(dir)) return packGo(dir, { outDir: flag(args, 'out'), goos: flag(args, 'goos'), goarch: flag(args, 'goarch') });
        if (flag(args, 'goos') !== undefined || flag(args, 'goarch') !== undefined)
          throw new CliError('CLI_USAGE', '--goos and --goarch apply to Go projects only (manifest.json beside go.mod)');
        if (isPythonProject(dir)) return packPython(dir, flag(args, 'out'));
        if (isCsharpProject(dir)) {
          if ((args.flags.get('include') ?? []).length > 0)
            throw new CliError('CLI_USAGE', '--include applies to Node.js projects; a C# package holds what dotnet publish writes');
          return packCsharp(dir, { outDir: flag(args, 'out') });
        }
        const project = loadProject(resolve(io.cwd, one(args.positional, 'pack')));
        pack(project, { outDir: flag(args, 'out'), include: args.flags.get('include') ?? [] }, (t) => io.out(t));
        return 0;
      }
      case 'notes': {
        const args = parseArgs(
          rest,
          ['out', 'notes', 'host-versions', 'node', 'base-url', 'security', 'concurrency', 'http-logs', 'updates'],
          ['http', 'stdout'],
        );
        const dir = resolve(io.cwd, one(args.positional, 'notes'));
        let pkg: PackageJson | undefined;
        try {
          pkg = loadProject(dir).packageJson;
        } catch {
          pkg = undefined; // an HTTP service may have no package.json beside its manifest
        }
        const facts = await gatherFacts(
          dir,
          pkg,
          {
            notes: flag(args, 'notes'),
            http: args.flags.has('http'),
            hostVersions: flag(args, 'host-versions'),
            node: flag(args, 'node'),
            baseUrl: flag(args, 'base-url'),
            security: flag(args, 'security'),
            concurrency: flag(args, 'concurrency'),
            httpLogs: flag(args, 'http-logs'),
            updates: flag(args, 'updates'),
          },
          io,
        );
        const markdown = renderNotes(facts);
        if (args.flags.has('stdout')) io.out(markdown);
        else {
          const file = resolve(dir, flag(args, 'out') ?? 'RELEASE_NOTES.md');
          writeFileSync(file, markdown);
          io.out(`Wrote ${file}`);
        }
        return 0;
      }
      case 'doctor': {
        const args = parseArgs(rest, ['timeout'], ['json']);
        const [target] = args.positional;
        if (!target || args.positional.length > 1)
          throw new CliError('CLI_USAGE', 'doctor takes one package file or folder: host-plugin doctor <package.zip | folder>');
        const source = resolve(io.cwd, target);
        if (!existsSync(source)) throw new CliError('DOCTOR_TARGET_MISSING', `${source} does not exist`);
        const timeout = doctorTimeoutSeconds(flag(args, 'timeout'));
        const report = await runConformance(source, {
          hostVersion: `host-plugin ${CLI_VERSION}`,
          ...(timeout > 0 ? { timeoutMilliseconds: timeout * 1000 } : {}),
        });
        io.out(args.flags.has('json') ? JSON.stringify(report, null, 2) : renderReport(report));
        return report.passed ? 0 : 1;
      }
      default:
        throw new CliError('CLI_USAGE', `unknown command "${command}" (commands: init, validate, pack, notes, doctor)`);
    }
  } catch (error) {
    if (error instanceof CliError) {
      io.err(error.render());
      return error.code === 'CLI_USAGE' ? 2 : 1;
    }
    throw error;
  }
}

/** The default bound of a whole doctor run: a conforming plugin takes seconds; one that never completes would take minutes. */
export const DOCTOR_TIMEOUT_SECONDS = 60;

function doctorTimeoutSeconds(value: string | undefined): number {
  if (value === undefined) return DOCTOR_TIMEOUT_SECONDS;
  const seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds < 0)
    throw new CliError('CLI_USAGE', `--timeout takes seconds, 0 or more (0: no bound); got "${value}"`);
  return seconds;
}

function one(positional: string[], command: string): string {
  if (positional.length > 1) throw new CliError('CLI_USAGE', `${command} takes at most one folder`);
  return positional[0] ?? '.';
}
