import type { HostPaths, InvalidPackage } from '@host/host-core';
import { LIMITS, parseManifestText, parseStdioManifest, type StdioManifest, type ValidationIssue } from '@host/protocol';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';

export interface DiscoveryResult {
  valid: Map<string, StdioManifest>;
  invalid: InvalidPackage[];
}

async function readPackageManifest(
  dir: string,
  folder: string,
): Promise<{ ok: true; manifest: StdioManifest } | { ok: false; issues: ValidationIssue[] }> {
  const file = join(dir, 'manifest.json');
  let text: string;
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) throw Object.assign(new Error('not a file'), { code: 'ENOENT' });
    if (stat.size > LIMITS.maxManifestBytes) {
      return {
        ok: false,
        issues: [
          { code: 'manifest.field.invalid', path: '', message: `manifest.json is larger than ${LIMITS.maxManifestBytes / 1024} KiB.` },
        ],
      };
    }
    text = await fs.readFile(file, 'utf8');
  } catch {
    return {
      ok: false,
      issues: [
        {
          code: 'manifest.field.required',
          path: '',
          message: `plugins-v2/${folder}/manifest.json is missing. Reinstall the plugin from its package.`,
        },
      ],
    };
  }
  const json = parseManifestText(text);
  if (!json.ok) return { ok: false, issues: json.issues };
  const parsed = parseStdioManifest(json.value);
  if (!parsed.ok) return parsed;
  if (parsed.value.pluginId !== folder) {
    return {
      ok: false,
      issues: [
        {
          code: 'manifest.pluginId.invalid',
          path: 'pluginId',
          message: `"pluginId" is "${parsed.value.pluginId}" but the package folder is plugins-v2/${folder}/. Reinstall the plugin from its package.`,
        },
      ],
    };
  }
  return { ok: true, manifest: parsed.value };
}

/**
 * Static discovery: reads `plugins-v2/<folder>/manifest.json` of every
 * package folder and validates it. Nothing is executed. Folders starting with
 * "." (staging) are the host's own.
 */
export async function discoverPackages(paths: HostPaths): Promise<DiscoveryResult> {
  const result: DiscoveryResult = { valid: new Map(), invalid: [] };
  const entries = await fs.readdir(paths.packagesRoot, { withFileTypes: true }).catch(() => []);
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (e.name.startsWith('.') || !e.isDirectory()) continue;
    const r = await readPackageManifest(join(paths.packagesRoot, e.name), e.name);
    if (r.ok) result.valid.set(e.name, r.manifest);
    else result.invalid.push({ pluginId: e.name, state: 'invalidManifest', issues: r.issues });
  }
  return result;
}
