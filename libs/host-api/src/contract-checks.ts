import type { PendingUpdate as PendingUpdateView, PluginState as PluginStateView, RuntimeStatusView } from '@host/admin-api';
import type { PluginState, RuntimeStatus } from '@host/host-core';
import type { PendingUpdate } from '@host/host-installer';

// The admin API's contract (@host/admin-api) states its own wire types so a
// browser build can use them; the host's records are defined where they are
// kept. These compile-time checks make the two fail typecheck together
// instead of drifting apart.

type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

export const pluginStatesMatch: Same<PluginState, PluginStateView> = true;
export const pendingUpdatesMatch: Same<PendingUpdate, PendingUpdateView> = true;
export const runtimeStatusFits: RuntimeStatus extends RuntimeStatusView ? true : false = true;
