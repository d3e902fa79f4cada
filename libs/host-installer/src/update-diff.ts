import type { StdioManifest } from '@host/protocol';
import { compare } from 'semver';

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

/** Stable JSON of a value: object keys sorted, so equal definitions compare equal. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** The installed and the incoming package: manifest and archive SHA-256 ("" when unknown). */
export interface ComparedPackage {
  manifest: StdioManifest;
  sha256: string;
}

export function diffPackages(installedPackage: ComparedPackage, incomingPackage: ComparedPackage): UpdateChanges {
  const [installed, incoming] = [installedPackage.manifest, incomingPackage.manifest];
  const before = new Map(installed.commands.map((c) => [c.name, c]));
  const after = new Map(incoming.commands.map((c) => [c.name, c]));
  const order = compare(incoming.version, installed.version);
  return {
    versionChanged: installed.version !== incoming.version,
    versionOrder: order > 0 ? 'upgrade' : order < 0 ? 'downgrade' : 'same',
    identicalPackage: installedPackage.sha256 !== '' && installedPackage.sha256 === incomingPackage.sha256,
    permissionsAdded: incoming.permissions.filter((p) => !installed.permissions.includes(p)),
    permissionsRemoved: installed.permissions.filter((p) => !incoming.permissions.includes(p)),
    commandsAdded: [...after.keys()].filter((n) => !before.has(n)),
    commandsRemoved: [...before.keys()].filter((n) => !after.has(n)),
    commandsChanged: [...after.keys()].filter((n) => before.has(n) && canonical(before.get(n)) !== canonical(after.get(n))),
    startCommandChanged: canonical(installed.transport.stdio) !== canonical(incoming.transport.stdio),
  };
}
