import {
  concurrencyOf,
  InitializeResultSchema,
  LIMITS,
  PROTOCOL_VERSION,
  RUNTIME_DEFAULTS,
  toValidationIssues,
  type InitializeParams,
  type InitializeResult,
  type StdioManifest,
} from '@host/protocol';
import type { PluginDirectories } from './launch';

/**
 * The params of host.initialize as the host sends them: the runtime limits
 * come from the manifest's `concurrency` (defaults otherwise). The
 * conformance runner sends the same params, so a plugin is checked against
 * exactly the handshake it will get.
 */
export function initializeParams(o: {
  manifest: StdioManifest;
  pluginId: string;
  instanceId: string;
  token: string;
  hostVersion: string;
  directories: PluginDirectories;
  settings: Record<string, unknown>;
}): InitializeParams {
  const concurrency = concurrencyOf(o.manifest.concurrency);
  return {
    supportedProtocolVersions: [PROTOCOL_VERSION],
    instanceId: o.instanceId,
    pluginId: o.pluginId,
    hostVersion: o.hostVersion,
    directories: o.directories,
    token: o.token,
    encoding: 'json',
    runtime: {
      maxConcurrentEvents: concurrency.maxConcurrentEvents,
      queueCapacity: concurrency.queueCapacity,
      requestTimeoutMilliseconds: RUNTIME_DEFAULTS.requestTimeoutMilliseconds,
      handlerDeadlineMilliseconds: concurrency.handlerDeadlineMilliseconds,
      maxHeaderLength: LIMITS.maxHeaderBytes,
      maxPayloadLength: LIMITS.maxPayloadBytes,
    },
    settings: o.settings,
  };
}

/** Checks a host.initialize result the way the host does (spec 3.4 step 3): the parsed result, or why it is refused. */
export function checkInitializeResult(
  result: unknown,
  pluginId: string,
): { ok: true; value: InitializeResult } | { ok: false; message: string } {
  const parsed = InitializeResultSchema.safeParse(result);
  if (!parsed.success) {
    const issues = toValidationIssues(parsed.error, 'initialize').map((i) => i.message);
    return { ok: false, message: `answered host.initialize with an invalid result: ${issues.join(' ')}` };
  }
  if (parsed.data.pluginId !== pluginId) {
    return { ok: false, message: `answered pluginId ${parsed.data.pluginId} but the manifest says ${pluginId}` };
  }
  return { ok: true, value: parsed.data };
}
