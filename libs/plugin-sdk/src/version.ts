import { RELEASE_VERSIONS } from '@host/protocol';

/** npm package name of this SDK; sent as `sdkName` in the host.initialize result. */
export const SDK_NAME = '@host/plugin-sdk-v2';

/**
 * Version of this SDK; sent as `sdkVersion` in the host.initialize result and
 * served in the HTTP manifest. Read from the workspace's one version source
 * (libs/protocol/src/versions.json, bundled at build time); a test keeps it
 * equal to package.json.
 */
export const SDK_VERSION: string = RELEASE_VERSIONS.sdkVersion;
