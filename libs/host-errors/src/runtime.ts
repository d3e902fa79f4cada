import { defineErrors } from '@host/protocol';

/**
 * The codes of the plugin runtime (libs/host-runtime): why a stdio plugin did not start or stopped running.
 * They are the state reason of a plugin and the admin API's answer to a start; a plugin never receives them.
 */
export const RUNTIME_ERRORS = defineErrors({
  PLUGIN_START_FAILED: {
    status: 422,
    message:
      'The plugin process exited or failed before the handshake finished. The message quotes its exit code and stderr; see the plugin log.',
    causes:
      'A missing dependency (ModuleNotFoundError, Cannot find module), a syntax error, a missing configuration value, an SDK definition error (a command without a handler), or a module the package does not ship that Node.js found above the package folder. The message quotes the first error line of stderr and its last lines; the full stack is in the plugin log. A Node.js plugin whose manifest lacks --host-stdio exits with code 2.',
    fix: 'Package the dependencies (node_modules, the vendored host_sdk_v2) with the SDK\'s packer, declare every imported module in dependencies, and add "--host-stdio" to transport.stdio.args.',
  },
  PLUGIN_START_TIMEOUT: {
    status: 422,
    message:
      'The plugin did not answer host.initialize in time. Check that the manifest passes --host-stdio and that the plugin waits for host.initialize on stdin.',
    causes:
      '--host-stdio is missing from transport.stdio.args, so the plugin printed its help and waits; or the plugin does not read requests from stdin; or its start is very slow (a large import, a network call before the handshake).',
    fix: "Add the argument, use the SDK's run function, and do slow setup in the start hook, after the handshake.",
  },
  PLUGIN_COMMAND_NOT_FOUND: {
    status: 422,
    message:
      'The start command was not found or is not executable. Install the runtime (node, python, ...) on the host or include the executable in the package.',
    causes:
      'The runtime (node, python3, dotnet) is not installed on the host machine or not on the PATH the host runs with, or a packaged executable lost its executable bit or was built for another system.',
    fix: 'Install the runtime for the user the host runs as, or ship a compiled executable (Go: never go run).',
  },
  PLUGIN_ISOLATION_FAILED: {
    status: 422,
    message:
      'The host could not give the plugin its own user, sandbox or limits, so it did not start it. The message names the step that failed; see the isolation section of docs/operator/security.md.',
    causes:
      "The plugin's user cannot reach its package folder (a parent folder of the data directory is not searchable by other users, mode 0700), the cgroup or the uid range is no longer writable or free, or a helper (setpriv, prlimit, bwrap) was removed after the host started.",
    fix: 'Make the parents of the data directory searchable (chmod o+x), keep HOST_PLUGIN_UID_RANGE free of other users, or choose a weaker mode with HOST_PLUGIN_ISOLATION and restart the host.',
  },
  PLUGIN_WORKDIR_INVALID: {
    status: 422,
    message: 'transport.stdio.workingDirectory is not a folder inside the package. Use "." or a folder inside the package.',
  },
  PLUGIN_HANDSHAKE_INVALID: {
    status: 422,
    message:
      'The answer to host.initialize is not valid (protocol version, pluginId, sdk name and version, encoding). The message names the field; rebuild the plugin with a protocol v2 SDK.',
    causes:
      'The code and the manifest disagree on pluginId (a copied plugin with an old id), or the plugin was built with an SDK for another protocol version.',
    fix: 'Make the ids equal and rebuild with an SDK for protocol 2.',
  },
  PLUGIN_STDOUT_POLLUTION: {
    status: 422,
    message: 'The plugin wrote something other than protocol frames to stdout. Send logs to stderr or log.write, never print to stdout.',
    causes:
      'A print, console.log or fmt.Println that runs before the SDK redirects stdout, or a library that logs to stdout. During the handshake the plugin fails; while running it counts as a crash (restartPending, then failed when the crash budget is spent).',
    fix: "Import the SDK first, log with the SDK's logger or to stderr.",
  },
});
