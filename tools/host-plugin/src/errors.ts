import { defineErrors } from '@host/protocol';

/**
 * Stable codes of the packer CLI, in the one entry format of every error
 * family. Each names what went wrong and the fix; tools/host-plugin/README.md
 * lists them all (a test checks the two against each other in both directions).
 */
export const CLI_ERRORS = defineErrors({
  CLI_USAGE: { message: 'The command line is not valid. Run `host-plugin --help`.' },
  INIT_TARGET_NOT_EMPTY: { message: 'The target folder is not empty. Choose a new folder or pass --force to write into it.' },
  INIT_PLUGIN_ID_INVALID: { message: 'The plugin id is not a lowercase dotted identifier such as com.example.echo. Pass a valid --id.' },
  PROJECT_MANIFEST_MISSING: {
    message:
      'No manifest.json in the project folder. Run the command in the plugin project (or pass its folder), or create one with `host-plugin init`.',
  },
  PROJECT_MANIFEST_INVALID: { message: 'manifest.json does not follow protocol v2. Fix each listed field.' },
  PROJECT_PACKAGE_JSON_MISSING: {
    message: 'No readable package.json in the project folder. A Node.js plugin needs one (npm init, or host-plugin init).',
  },
  ENTRY_MISSING: { message: 'The file the start command runs does not exist. Build the plugin first (npm run build).' },
  ENTRY_SOURCE_ONLY: {
    message:
      'The start command runs source code (TypeScript) instead of the built JavaScript. Point transport.stdio.args at the build output, e.g. dist/index.js.',
  },
  ABSOLUTE_PATH: {
    message: 'A path in transport.stdio is absolute, so the package only works on this machine. Use a path relative to the package.',
  },
  WORKDIR_OUTSIDE: { message: 'transport.stdio.workingDirectory leaves the package. Use "." or a folder inside the package.' },
  WORKDIR_MISSING: {
    message: 'transport.stdio.workingDirectory names a folder that does not exist in the project. Create it (build first) or use ".".',
  },
  COMMAND_NOT_NODE: {
    message:
      'The start command is not node, so this Node.js packer cannot tell which file is the entry. Use "command": "node" with the built script in args.',
  },
  HOST_STDIO_MISSING: {
    message:
      'transport.stdio.args lacks --host-stdio, so the plugin would print help and exit instead of speaking the protocol. Add "--host-stdio".',
  },
  SDK_NOT_A_DEPENDENCY: {
    message:
      '@host/plugin-sdk-v2 is not in "dependencies" of package.json, so it would not be packed. Move it there (npm install @host/plugin-sdk-v2).',
  },
  SDK_NOT_INSTALLED: { message: '@host/plugin-sdk-v2 is not installed in node_modules. Run npm install.' },
  SDK_NOT_BUILT: {
    message:
      'The installed @host/plugin-sdk-v2 has no built files (a linked SDK checkout that was not built). Build the SDK, then pack again.',
  },
  SDK_VERSION_MISMATCH: {
    message: 'manifest.json sdkVersion differs from the installed SDK version. Set sdkVersion to the installed version.',
  },
  DEPENDENCY_MISSING: { message: 'A production dependency is not installed. Run npm install (npm ci in CI) before packing.' },
  LINK_SKIPPED: {
    message:
      'A dependency contains symbolic links; they are left out because the host refuses links in a package. Make sure the plugin does not need them.',
  },
  PACK_REFUSED: { message: 'Validation found problems, so no package was written. Fix each listed problem and pack again.' },
  PACK_TOO_LARGE: { message: 'A file is larger than a ZIP without ZIP64 can hold (4 GiB). Leave it out of the package.' },
  PYTHON_SDK_MISSING: {
    message:
      'The Python SDK (host_sdk_v2) to copy into a new Python project was not found beside this CLI. Run the CLI from a checkout of the host repository or a complete release.',
  },
  GO_SDK_MISSING: {
    message:
      'The Go SDK (libs/plugin-sdk-go) to copy into a new Go project was not found beside this CLI. Run the CLI from a checkout of the host repository or a complete release.',
  },
  GO_NOT_FOUND: {
    message:
      'No Go toolchain to run the Go packer. Install Go 1.23 or newer (Debian bookworm: golang-1.23-go from bookworm-backports), or set HOST_PLUGIN_GO to its go binary.',
  },
  CSHARP_SDK_MISSING: {
    message:
      'The C# SDK package (HostSdk .nupkg) to put into a new C# project was not found beside this CLI. In a checkout of the host repository run `node libs/plugin-sdk-csharp/scripts/dotnet.mjs feed` (it runs dotnet pack); or use a complete release.',
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

export type CliErrorCode = keyof typeof CLI_ERRORS;

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
      `  fix: ${CLI_ERRORS[this.code].message}`,
    ];
    return lines.join('\n');
  }
}
