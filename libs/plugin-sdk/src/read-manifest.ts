import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseManifestText } from '@host/protocol';
import type { ManifestSource } from './define-plugin';
import { PluginSdkError } from './errors';

/**
 * Reads `manifest.json` for definePlugin, so the manifest stays one file
 * that the host, the packer and the plugin all read. Pass its path (a URL
 * from `import.meta.url` works too). The content is validated by definePlugin.
 *
 * @example
 * ```ts
 * import { join } from 'node:path';
 * import { definePlugin, readManifest } from '@host/plugin-sdk-v2';
 *
 * // In src/plugin.ts, built to dist/plugin.js: manifest.json is one folder up in both.
 * export default definePlugin({
 *   manifest: readManifest(join(__dirname, '..', 'manifest.json')),
 *   async onMessage(ctx) {
 *     await ctx.reply('hi');
 *   },
 * });
 * ```
 */
export function readManifest(path: string | URL): ManifestSource {
  const file = path instanceof URL ? fileURLToPath(path) : path;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new PluginSdkError(
      'SDK_DEFINITION_INVALID',
      `Cannot read the manifest at ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}). manifest.json sits at the package root; pass its path.`,
    );
  }
  const parsed = parseManifestText(text);
  if (!parsed.ok) throw new PluginSdkError('SDK_MANIFEST_INVALID', `${file}: ${parsed.issues[0]?.message}`, parsed.issues);
  const value = parsed.value;
  if (
    typeof value !== 'object' ||
    value === null ||
    Array.isArray(value) ||
    typeof (value as { pluginId?: unknown }).pluginId !== 'string'
  ) {
    throw new PluginSdkError('SDK_MANIFEST_INVALID', `${file} is not a manifest object with a "pluginId".`);
  }
  return value as ManifestSource;
}
