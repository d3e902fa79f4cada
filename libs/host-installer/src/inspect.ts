import { HostError } from '@host/host-core';
import { LIMITS, parseManifestText, parseStdioManifest, type StdioManifest } from '@host/protocol';
import { readArchive, type ArchiveEntry } from './archive';
import { bufferSource, type ArchiveSource } from './archive-source';
import { inflateEntry } from './extract';
import { checkNodeDependencies, checkPackage, checkPlatform } from './package-checks';
import type { InstallLimits } from './limits';

/** Folders some archivers add beside the content (macOS Finder); never part of a package. */
const IGNORED_TOP_LEVEL = new Set(['__MACOSX']);

/** An archive that passed every check that does not need to unpack it. */
export interface PackagePlan {
  sha256: string;
  manifest: StdioManifest;
  /** "" for the root layout, or the single top-level folder (the pluginId). */
  folder: string;
  /** Entries with paths relative to the package root and the mode to write. */
  files: { entry: ArchiveEntry; path: string; mode: number }[];
}

function findManifestEntry(entries: ArchiveEntry[]): { folder: string; manifest: ArchiveEntry } {
  const byPath = new Map(entries.map((e) => [e.path, e]));
  const root = byPath.get('manifest.json');
  if (root && !root.isDirectory) return { folder: '', manifest: root };
  const tops = new Set(entries.map((e) => e.path.split('/')[0]!));
  const nested = entries.find((e) => !e.isDirectory && e.path.endsWith('/manifest.json'));
  const hint = nested ? ` (found "${nested.path}": zip the folder that holds manifest.json, or its contents)` : '';
  if (tops.size === 1) {
    const [top] = [...tops] as [string];
    const inFolder = byPath.get(`${top}/manifest.json`);
    if (inFolder && !inFolder.isDirectory) return { folder: top, manifest: inFolder };
    throw new HostError('INSTALL_MANIFEST_MISSING', `No manifest.json at the archive root or directly in "${top}/"${hint}.`, {
      found: nested?.path ?? null,
    });
  }
  const candidates = [...tops].filter((t) => byPath.has(`${t}/manifest.json`));
  if (candidates.length > 0) {
    throw new HostError(
      'INSTALL_LAYOUT_AMBIGUOUS',
      `manifest.json is in "${candidates[0]}/", but the archive root also holds ${[...tops]
        .filter((t) => t !== candidates[0])
        .slice(0, 5)
        .map((t) => `"${t}"`)
        .join(', ')}. Put everything at the root, or in one folder named by the plugin id.`,
      { topLevel: [...tops].slice(0, 20) },
    );
  }
  throw new HostError('INSTALL_MANIFEST_MISSING', `No manifest.json at the archive root or in a single top-level folder${hint}.`, {
    found: nested?.path ?? null,
  });
}

function readManifest(entry: ArchiveEntry, limits: InstallLimits): StdioManifest {
  let bytes: Buffer;
  try {
    bytes = inflateEntry(entry, limits, { remaining: Math.min(limits.maxUnpackedBytes, LIMITS.maxManifestBytes) });
  } catch (e) {
    if ((e as HostError).code !== 'INSTALL_TOO_LARGE_UNPACKED') throw e;
    throw new HostError(
      'INSTALL_MANIFEST_INVALID',
      `manifest.json is larger than ${LIMITS.maxManifestBytes / 1024} KiB. Keep it to the manifest fields.`,
      {
        issues: [{ code: 'manifest.field.invalid', path: '', message: 'manifest.json is too large' }],
      },
    );
  }
  const text = parseManifestText(bytes.toString('utf8'));
  if (!text.ok) throw new HostError('INSTALL_MANIFEST_INVALID_JSON', text.issues[0]!.message, { issues: text.issues });
  const raw = text.value as { transport?: { type?: unknown }; capabilities?: unknown } | null;
  // An HTTP manifest has no stdio transport (it declares capabilities); send its author to registration.
  const httpLike =
    raw !== null &&
    typeof raw === 'object' &&
    ((typeof raw.transport?.type === 'string' && raw.transport.type !== 'stdio-jsonrpc') ||
      (raw.transport === undefined && typeof raw.capabilities === 'number'));
  const parsed = parseStdioManifest(text.value);
  if (httpLike || (!parsed.ok && parsed.issues.some((i) => i.code === 'manifest.transport.unsupported'))) {
    const transport = typeof raw?.transport?.type === 'string' ? raw.transport.type : 'http';
    throw new HostError(
      'INSTALL_TRANSPORT_UNSUPPORTED',
      transport === 'http'
        ? undefined
        : `Transport "${transport}" cannot be installed from a package; local packages use "stdio-jsonrpc". An HTTP plugin is deployed as a service and added with "Register HTTP plugin".`,
      { transport, issues: parsed.ok ? [] : parsed.issues },
    );
  }
  if (!parsed.ok) {
    const first = parsed.issues[0]!;
    const more = parsed.issues.length > 1 ? ` (and ${parsed.issues.length - 1} more in details.issues)` : '';
    throw new HostError('INSTALL_MANIFEST_INVALID', `manifest.json does not follow protocol v2: ${first.message}${more}`, {
      issues: parsed.issues,
    });
  }
  return parsed.value;
}

/** A small text file of the archive (package.json); undefined when it is too large or cannot be read. */
function readText(entry: ArchiveEntry, limits: InstallLimits): string | undefined {
  try {
    return inflateEntry(entry, limits, { remaining: Math.min(limits.maxUnpackedBytes, PACKAGE_JSON_MAX_BYTES) }).toString('utf8');
  } catch {
    return undefined;
  }
}

const PACKAGE_JSON_MAX_BYTES = 1024 * 1024;

/**
 * Checks an uploaded archive without writing anything: entries, layout,
 * manifest and package rules. Extraction then enforces the size limits on
 * real bytes. Nothing in the archive is executed, here or later. An archive
 * given as a source (a file) is read in ranges and must stay open until its
 * plan is extracted.
 */
export function inspectPackage(input: Uint8Array | ArchiveSource, limits: InstallLimits): PackagePlan {
  const source = input instanceof Uint8Array ? bufferSource(input) : input;
  const sha256 = source.sha256();
  const { entries } = readArchive(source, limits);
  const content = entries.filter((e) => !IGNORED_TOP_LEVEL.has(e.path.split('/')[0]!));
  const { folder, manifest: manifestEntry } = findManifestEntry(content);
  const manifest = readManifest(manifestEntry, limits);
  if (folder && folder !== manifest.pluginId) {
    throw new HostError(
      'INSTALL_FOLDER_MISMATCH',
      `The top-level folder is "${folder}" but the pluginId is "${manifest.pluginId}". Rename the folder to "${manifest.pluginId}" or zip the files at the root.`,
      { folder, pluginId: manifest.pluginId },
    );
  }
  const files: PackagePlan['files'] = [];
  for (const entry of content) {
    if (folder && entry.path === folder) continue;
    const path = folder ? entry.path.slice(folder.length + 1) : entry.path;
    files.push({ entry, path, mode: entry.mode });
  }
  checkPlatform(manifest);
  const commandFile = checkPackage(manifest, files);
  checkNodeDependencies(manifest, files, (entry) => readText(entry, limits));
  if (commandFile) {
    // A native start command must be executable even when the ZIP was made where modes are not stored.
    for (const f of files) if (f.path === commandFile) f.mode = 0o755;
  }
  return { sha256, manifest, folder, files };
}
