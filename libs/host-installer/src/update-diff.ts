import { PermissionSchema, type StdioManifest } from '@host/protocol';
import { compare } from 'semver';
import { z } from 'zod';

/** What the operator compares side by side before confirming an update. */
export const PackageSummarySchema = z.object({
  pluginId: z.string(),
  name: z.string(),
  version: z.string(),
  author: z.string(),
  description: z.string().optional(),
  sdkVersion: z.string(),
  startCommand: z.object({ command: z.string(), args: z.array(z.string()), workingDirectory: z.string() }),
  permissions: z.array(PermissionSchema),
  commands: z.array(z.string()).describe('Command names.'),
  sha256: z.string().describe('SHA-256 of the archive this version comes from ("" when it was found on disk).'),
});
export type PackageSummary = z.infer<typeof PackageSummarySchema>;

export const UpdateChangesSchema = z.object({
  versionChanged: z.boolean(),
  versionOrder: z
    .enum(['upgrade', 'downgrade', 'same'])
    .describe('How the incoming version compares with the installed one by semantic-version precedence (build metadata ignored).'),
  identicalPackage: z
    .boolean()
    .describe('The upload is byte for byte the installed package (same SHA-256): confirming reinstalls what runs now.'),
  permissionsAdded: z.array(PermissionSchema),
  permissionsRemoved: z.array(PermissionSchema),
  commandsAdded: z.array(z.string()),
  commandsRemoved: z.array(z.string()),
  commandsChanged: z.array(z.string()).describe('Commands whose prefixes, aliases, scopes or priority differ.'),
  startCommandChanged: z.boolean(),
});
export type UpdateChanges = z.infer<typeof UpdateChangesSchema>;

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
