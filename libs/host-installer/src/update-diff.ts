import type { StdioManifest } from '@host/protocol';
import { canonicalJson, diffManifestBasics } from '@host/host-core';

// The shapes are the admin API's (@host/admin-api): the operator sees them in the update dialog.
import type { PackageSummary, UpdateChanges } from '@host/admin-api';

export function summarize(manifest: StdioManifest, sha256: string): PackageSummary {
  const { command, args, workingDirectory } = manifest.transport.stdio;
  return {
    pluginId: manifest.pluginId,
    name: manifest.name,
    version: manifest.version,
    author: manifest.author,
    ...(manifest.description === undefined ? {} : { description: manifest.description }),
    sdkVersion: manifest.sdkVersion,
    startCommand: { command, args, workingDirectory },
    permissions: manifest.permissions,
    commands: manifest.commands.map((c) => c.name),
    sha256,
  };
}

/** The installed and the incoming package: manifest and archive SHA-256 ("" when unknown). */
export interface ComparedPackage {
  manifest: StdioManifest;
  sha256: string;
}

export function diffPackages(installedPackage: ComparedPackage, incomingPackage: ComparedPackage): UpdateChanges {
  const [installed, incoming] = [installedPackage.manifest, incomingPackage.manifest];
  return {
    ...diffManifestBasics(installed, incoming),
    identicalPackage: installedPackage.sha256 !== '' && installedPackage.sha256 === incomingPackage.sha256,
    startCommandChanged: canonicalJson(installed.transport.stdio) !== canonicalJson(incoming.transport.stdio),
  };
}
