import type { UpdateChanges } from '@host/admin-api';
import { capabilityNames, type HttpManifest } from '@host/protocol';
import { createHash } from 'node:crypto';
import { compare } from 'semver';

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

/** SHA-256 of a manifest's canonical JSON: what an operator confirms. */
export function manifestSha256(manifest: HttpManifest): string {
  return createHash('sha256').update(canonical(manifest)).digest('hex');
}

const added = <T>(before: readonly T[], after: readonly T[]) => after.filter((x) => !before.includes(x));

/** A stored and a fetched HTTP manifest compared, in the shape of a package update's diff. */
export function diffHttpManifests(installed: HttpManifest, incoming: HttpManifest): UpdateChanges {
  const before = new Map(installed.commands.map((c) => [c.name, c]));
  const after = new Map(incoming.commands.map((c) => [c.name, c]));
  const subscriptions = (m: HttpManifest) => [...new Set(m.eventSubscriptions.map((e) => e.eventType))];
  const order = compare(incoming.version, installed.version);
  return {
    versionChanged: installed.version !== incoming.version,
    versionOrder: order > 0 ? 'upgrade' : order < 0 ? 'downgrade' : 'same',
    identicalPackage: canonical(installed) === canonical(incoming),
    permissionsAdded: added(installed.permissions, incoming.permissions),
    permissionsRemoved: added(incoming.permissions, installed.permissions),
    commandsAdded: [...after.keys()].filter((n) => !before.has(n)),
    commandsRemoved: [...before.keys()].filter((n) => !after.has(n)),
    commandsChanged: [...after.keys()].filter((n) => before.has(n) && canonical(before.get(n)) !== canonical(after.get(n))),
    startCommandChanged: false,
    subscriptionsAdded: added(subscriptions(installed), subscriptions(incoming)),
    subscriptionsRemoved: added(subscriptions(incoming), subscriptions(installed)),
    capabilitiesAdded: added(capabilityNames(installed.capabilities), capabilityNames(incoming.capabilities)),
    capabilitiesRemoved: added(capabilityNames(incoming.capabilities), capabilityNames(installed.capabilities)),
  };
}

/** Whether the fetched manifest gives the plugin more than the stored one: the operator confirms it first. */
export function escalates(changes: UpdateChanges): boolean {
  return [
    changes.permissionsAdded,
    changes.commandsAdded,
    changes.commandsChanged,
    changes.subscriptionsAdded,
    changes.capabilitiesAdded,
  ].some((list) => (list?.length ?? 0) > 0);
}
