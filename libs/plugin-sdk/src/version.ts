/** npm package name of this SDK; sent as `sdkName` in the host.initialize result. */
export const SDK_NAME = '@host/plugin-sdk-v2';

/**
 * Version of this SDK; sent as `sdkVersion` in the host.initialize result and
 * served in the HTTP manifest. A test keeps it equal to package.json.
 */
export const SDK_VERSION = '2.0.0';
