import { defineErrors, PACK_ERRORS, type PackErrorCode } from '@host/protocol';

/**
 * Stable codes of the CLI's own commands, in the one entry format of every
 * error family. Each names what went wrong and the fix. What `validate` and
 * `pack` find in a project has the packaging codes every packer shares
 * (PACK_ERRORS of the protocol, docs/protocol/v2.md section 11.5), listed in
 * NODE_PACK_CODES. tools/host-plugin/README.md lists both (a test checks the
 * page against them in both directions).
 */
export const CLI_ERRORS = defineErrors({
  CLI_USAGE: { message: 'The command line is not valid. Run `host-plugin --help`.' },
  INIT_TARGET_NOT_EMPTY: { message: 'The target folder is not empty. Choose a new folder or pass --force to write into it.' },
  INIT_PLUGIN_ID_INVALID: { message: 'The plugin id is not a lowercase dotted identifier such as com.example.echo. Pass a valid --id.' },
  PYTHON_SDK_MISSING: {
    message:
      'The Python SDK (host_sdk_v2) to copy into a new Python project was not found beside this CLI. Run the CLI from a checkout of the host repository, or install the published @host/host-plugin package (it carries the SDK in dist/sdk).',
  },
  GO_SDK_MISSING: {
    message:
      'The Go SDK (libs/plugin-sdk-go) to copy into a new Go project was not found beside this CLI. Run the CLI from a checkout of the host repository, or install the published @host/host-plugin package (it carries the SDK in dist/sdk).',
  },
  GO_NOT_FOUND: {
    message:
      'No Go toolchain to run the Go packer. Install Go 1.23 or newer (Debian bookworm: golang-1.23-go from bookworm-backports), or set HOST_PLUGIN_GO to its go binary.',
  },
  CSHARP_SDK_MISSING: {
    message:
      'The C# SDK package (HostSdk .nupkg) to put into a new C# project was not found beside this CLI. In a checkout of the host repository run `npx nx run plugin-sdk-csharp:feed` (dotnet pack); or install the published @host/host-plugin package (it carries the .nupkg in dist/sdk).',
  },
  DOTNET_NOT_FOUND: {
    message:
      'No .NET SDK to publish the C# plugin. Install the .NET 8 SDK or newer with dotnet on PATH, or set HOST_PLUGIN_DOTNET to its dotnet binary.',
  },
  PYTHON_NOT_FOUND: {
    message:
      'No Python interpreter to run the Python packer. Install Python 3.9 or newer as python3, or set HOST_PLUGIN_PYTHON to its path.',
  },
  NOTES_INPUT_MISSING: {
    message:
      'Release notes need facts the manifest does not hold. Pass them as flags or in notes.json, or run the command in a terminal to be asked.',
  },
  NOTES_INPUT_INVALID: { message: 'notes.json is not valid. Fix the reported field.' },
  DOCTOR_TARGET_MISSING: {
    message: 'There is no such package file or folder. Pass the .zip `host-plugin pack` wrote, or a folder that holds manifest.json.',
  },
});

/** The packaging codes the Node.js packer reports (`validate` and `pack` in a Node.js project). */
export const NODE_PACK_CODES = [
  'PACK_MANIFEST_MISSING',
  'PACK_MANIFEST_INVALID',
  'PACK_TRANSPORT_NOT_STDIO',
  'PACK_PACKAGE_JSON_MISSING',
  'PACK_HOST_STDIO_MISSING',
  'PACK_ENTRY_MISSING',
  'PACK_ENTRY_SOURCE_ONLY',
  'PACK_COMMAND_UNSUPPORTED',
  'PACK_ABSOLUTE_PATH',
  'PACK_WORKDIR_OUTSIDE',
  'PACK_WORKDIR_MISSING',
  'PACK_INCLUDE_INVALID',
  'PACK_SDK_NOT_A_DEPENDENCY',
  'PACK_SDK_NOT_INSTALLED',
  'PACK_SDK_NOT_BUILT',
  'PACK_SDK_VERSION_MISMATCH',
  'PACK_DEPENDENCY_UNRESOLVED',
  'PACK_LINK_SKIPPED',
  'PACK_FILE_TOO_LARGE',
  'PACK_OUTPUT_NOT_WRITABLE',
] as const satisfies readonly PackErrorCode[];

export type CliErrorCode = keyof typeof CLI_ERRORS | (typeof NODE_PACK_CODES)[number];

/** The entry of a code: the CLI's own, or the packaging catalogue's. */
export function cliErrorInfo(code: CliErrorCode): { message: string } {
  return code in CLI_ERRORS ? CLI_ERRORS[code as keyof typeof CLI_ERRORS] : PACK_ERRORS[code as PackErrorCode];
}

/** A failure the user can fix; printed as `error CODE: message` with the fix. */
export class CliError extends Error {
  constructor(
    readonly code: CliErrorCode,
    detail: string,
    readonly details: readonly string[] = [],
  ) {
    super(detail);
  }

  /** The text shown to the user: what happened, where, and the fix. */
  render(): string {
    const lines = [
      `error ${this.code}: ${this.message}`,
      ...this.details.map((d) => `  - ${d}`),
      `  fix: ${cliErrorInfo(this.code).message}`,
    ];
    return lines.join('\n');
  }
}
