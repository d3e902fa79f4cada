import type { HttpManifest, StdioManifest, ValidationIssue } from '@host/protocol';

export type Transport = 'stdio-jsonrpc' | 'http';

/**
 * Plugin states. stdio plugins move through the runtime states; HTTP plugins
 * are `running` (enabled) or `stopped` (disabled) and carry a separate health.
 * See docs/protocol/v2.md, "Plugin states". Defined with the admin API's
 * contract, which the admin app shows.
 */
export { PLUGIN_STATES, type PluginState } from '@host/protocol';

interface RecordBase {
  pluginId: string;
  installedAt: string;
  updatedAt: string;
  /** Operator intent: start this plugin when the host starts. */
  enabled: boolean;
}

export interface StdioPluginRecord extends RecordBase {
  transport: 'stdio-jsonrpc';
  manifest: StdioManifest;
  /** SHA-256 of the archive the installed version came from. */
  packageSha256: string;
}

export interface HttpPluginRecord extends RecordBase {
  transport: 'http';
  manifest: HttpManifest;
  baseUrl: string;
  /** The signing secret, kept to sign requests; shown to the operator once. */
  signingSecret: string;
  requestTimeoutMilliseconds?: number;
}

export type PluginRecord = StdioPluginRecord | HttpPluginRecord;

/** A package found on disk whose manifest does not validate. */
export interface InvalidPackage {
  pluginId: string;
  state: 'invalidManifest';
  issues: ValidationIssue[];
}
