import versions from './versions.json';

/**
 * The one version source of the workspace, read from versions.json beside
 * this file (a data file, so the release script rewrites it without parsing
 * code):
 * - `sdkVersion`: the version of every protocol v2 SDK (Node, Python, Go, C#),
 *   of the host-plugin CLI and of the SDK release archives. Every other place
 *   that states it is listed in tools/scripts/versions.mjs, stamped by a
 *   release and checked by tools/workspace-checks.
 * - `protocolVersion`: the wire protocol these SDKs and the host speak.
 * - `supportedSdkVersions`: the SDK versions (a semver range) whose plugins
 *   this host runs.
 * - `hostVersions`: the host versions (a semver range) that run plugins built
 *   with this SDK; `host-plugin notes` states it.
 * - `hostVersionFrom`: where the host's own version lives (the host is not
 *   published; its version is the `version` of that package.json).
 */
export interface ReleaseVersions {
  readonly sdkVersion: string;
  readonly protocolVersion: number;
  readonly supportedSdkVersions: string;
  readonly hostVersions: string;
  readonly hostVersionFrom: string;
}

export const RELEASE_VERSIONS: ReleaseVersions = Object.freeze({ ...versions });
