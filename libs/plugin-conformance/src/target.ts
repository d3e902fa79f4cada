import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { HostError } from '@host/host-core';
import {
  checkNodeDependencies,
  checkPackage,
  checkPlatform,
  DEFAULT_INSTALL_LIMITS,
  extractEntries,
  inspectPackage,
  openFileSource,
  type InstallLimits,
} from '@host/host-installer';
import { LIMITS, parseManifestText, parseStdioManifest, type StdioManifest } from '@host/protocol';

/** A plugin ready to be started: its folder and manifest, or why the installer would refuse it. */
export type PreparedPlugin =
  | { ok: true; packageDir: string; manifest: StdioManifest; seen: string; cleanup: () => Promise<void> }
  | { ok: false; code: string; message: string; manifest: StdioManifest | null; cleanup: () => Promise<void> };

const nothing = async () => undefined;

function refusal(e: unknown, manifest: StdioManifest | null = null): PreparedPlugin {
  if (e instanceof HostError) {
    const issues = (e.details as { issues?: { path: string; message: string }[] } | undefined)?.issues ?? [];
    const more = issues.length > 1 ? ` Issues: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}` : '';
    return { ok: false, code: e.code, message: `${e.message}${more}`, manifest, cleanup: nothing };
  }
  throw e;
}

/**
 * A package file (.zip): the installer's own inspection (archive, layout,
 * manifest, start command, dependencies, platform), then its extraction
 * into a temporary folder, from where the plugin runs as if installed.
 */
export async function preparePackageFile(file: string, limits: InstallLimits = DEFAULT_INSTALL_LIMITS): Promise<PreparedPlugin> {
  let archive;
  let plan;
  try {
    // Read in ranges while it is checked and unpacked, as the installer reads an upload.
    archive = openFileSource(file);
    plan = inspectPackage(archive, limits);
  } catch (e) {
    archive?.close();
    return refusal(e);
  }
  const dir = await mkdtemp(join(tmpdir(), 'host-doctor-package-'));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  try {
    await extractEntries({ destination: dir, limits, files: plan.files });
  } catch (e) {
    await cleanup();
    return refusal(e, plan.manifest);
  } finally {
    archive.close();
  }
  return {
    ok: true,
    packageDir: dir,
    manifest: plan.manifest,
    seen: `the archive passed the installer's checks (${plan.files.length} entries)`,
    cleanup,
  };
}

/**
 * A folder holding an unpacked package (manifest.json at its root): the
 * installer's manifest and package checks over the folder's files, without
 * copying it; the plugin then runs in the folder itself.
 */
export function prepareFolder(dir: string, limits: InstallLimits = DEFAULT_INSTALL_LIMITS): PreparedPlugin {
  let text: string;
  try {
    const bytes = readFileSync(join(dir, 'manifest.json'));
    if (bytes.length > LIMITS.maxManifestBytes)
      return {
        ok: false,
        code: 'INSTALL_MANIFEST_INVALID',
        message: `manifest.json is larger than ${LIMITS.maxManifestBytes / 1024} KiB`,
        manifest: null,
        cleanup: nothing,
      };
    text = bytes.toString('utf8');
  } catch {
    return {
      ok: false,
      code: 'INSTALL_MANIFEST_MISSING',
      message: `No manifest.json in ${dir}. Point doctor at the folder that holds manifest.json, or at the package ZIP.`,
      manifest: null,
      cleanup: nothing,
    };
  }
  const json = parseManifestText(text);
  if (!json.ok)
    return { ok: false, code: 'INSTALL_MANIFEST_INVALID_JSON', message: json.issues[0]!.message, manifest: null, cleanup: nothing };
  const parsed = parseStdioManifest(json.value);
  if (!parsed.ok)
    return {
      ok: false,
      code: parsed.issues.some((i) => i.code === 'manifest.transport.unsupported')
        ? 'INSTALL_TRANSPORT_UNSUPPORTED'
        : 'INSTALL_MANIFEST_INVALID',
      message: `manifest.json does not follow protocol v2: ${parsed.issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`,
      manifest: null,
      cleanup: nothing,
    };
  const manifest = parsed.value;
  const files: { entry: { isDirectory: boolean; file: string }; path: string }[] = [];
  const walk = (folder: string) => {
    for (const d of readdirSync(folder, { withFileTypes: true })) {
      const full = join(folder, d.name);
      const path = relative(dir, full).split(sep).join('/');
      // Links are left out as the packer leaves them out: an archive cannot carry them.
      if (lstatSync(full).isSymbolicLink()) continue;
      if (files.length >= limits.maxEntries)
        throw new HostError('INSTALL_TOO_MANY_ENTRIES', `The folder holds more than ${limits.maxEntries} entries.`);
      files.push({ entry: { isDirectory: d.isDirectory(), file: full }, path });
      if (d.isDirectory()) walk(full);
    }
  };
  try {
    walk(dir);
    checkPlatform(manifest);
    checkPackage(manifest, files);
    checkNodeDependencies(manifest, files, (entry) => {
      try {
        return readFileSync(entry.file, 'utf8');
      } catch {
        return undefined;
      }
    });
  } catch (e) {
    return refusal(e, manifest);
  }
  return {
    ok: true,
    packageDir: dir,
    manifest,
    seen: `the folder passed the installer's checks (${files.length} entries)`,
    cleanup: nothing,
  };
}
