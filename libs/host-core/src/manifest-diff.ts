import type { UpdateChanges } from '@host/protocol';
import type { Command, Permission } from '@host/protocol';
import { compare } from 'semver';

/** Stable JSON of a value: object keys sorted, so equal definitions compare equal. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** The items of `after` that `before` lacks. */
export const addedItems = <T>(before: readonly T[], after: readonly T[]): T[] => after.filter((x) => !before.includes(x));

/** What both kinds of manifest have that an operator compares before confirming. */
interface ComparedManifest {
  version: string;
  permissions: readonly Permission[];
  commands: readonly Command[];
}

/**
 * The differences every update shows, stdio package or HTTP manifest alike:
 * the version and its order, permissions, and commands (a command whose
 * prefixes, aliases, scopes or priority differ is changed). Each transport
 * adds what is its own (the start command; subscriptions and capabilities).
 */
export function diffManifestBasics(
  installed: ComparedManifest,
  incoming: ComparedManifest,
): Pick<
  UpdateChanges,
  'versionChanged' | 'versionOrder' | 'permissionsAdded' | 'permissionsRemoved' | 'commandsAdded' | 'commandsRemoved' | 'commandsChanged'
> {
  const before = new Map(installed.commands.map((c) => [c.name, c]));
  const after = new Map(incoming.commands.map((c) => [c.name, c]));
  const order = compare(incoming.version, installed.version);
  return {
    versionChanged: installed.version !== incoming.version,
    versionOrder: order > 0 ? 'upgrade' : order < 0 ? 'downgrade' : 'same',
    permissionsAdded: addedItems(installed.permissions, incoming.permissions),
    permissionsRemoved: addedItems(incoming.permissions, installed.permissions),
    commandsAdded: [...after.keys()].filter((n) => !before.has(n)),
    commandsRemoved: [...before.keys()].filter((n) => !after.has(n)),
    commandsChanged: [...after.keys()].filter((n) => before.has(n) && canonicalJson(before.get(n)) !== canonicalJson(after.get(n))),
  };
}
