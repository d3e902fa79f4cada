import type { UpdateChanges } from '@host/admin-api';
import { capabilityNames, type HttpManifest } from '@host/protocol';
import { createHash } from 'node:crypto';
import { addedItems, canonicalJson, diffManifestBasics } from '@host/host-core';

/** SHA-256 of a manifest's canonical JSON: what an operator confirms. */
export function manifestSha256(manifest: HttpManifest): string {
  return createHash('sha256').update(canonicalJson(manifest)).digest('hex');
}

/** A stored and a fetched HTTP manifest compared, in the shape of a package update's diff. */
export function diffHttpManifests(installed: HttpManifest, incoming: HttpManifest): UpdateChanges {
  const subscriptions = (m: HttpManifest) => [...new Set(m.eventSubscriptions.map((e) => e.eventType))];
  return {
    ...diffManifestBasics(installed, incoming),
    identicalPackage: canonicalJson(installed) === canonicalJson(incoming),
    startCommandChanged: false,
    subscriptionsAdded: addedItems(subscriptions(installed), subscriptions(incoming)),
    subscriptionsRemoved: addedItems(subscriptions(incoming), subscriptions(installed)),
    capabilitiesAdded: addedItems(capabilityNames(installed.capabilities), capabilityNames(incoming.capabilities)),
    capabilitiesRemoved: addedItems(capabilityNames(incoming.capabilities), capabilityNames(installed.capabilities)),
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
