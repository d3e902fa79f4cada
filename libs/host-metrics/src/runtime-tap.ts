import type { RuntimeStatus } from '@host/host-core';
import type { HostFamilies } from './families';

/**
 * Counts crashes and automatic restarts from the stdio runtime's status changes (its onStatusChange):
 * a crash raises the supervisor's crashCount, and an automatic restart is the step from restartPending
 * to starting. An operator's start resets crashCount; that is no crash and not counted.
 */
export class RuntimeTap {
  private readonly last = new Map<string, RuntimeStatus>();

  constructor(private readonly f: HostFamilies) {}

  statusChanged(pluginId: string, status: RuntimeStatus): void {
    const before = this.last.get(pluginId);
    this.last.set(pluginId, status);
    const plugin = { plugin_id: pluginId };
    if (!before) {
      // Zero from the first status on, so rate() and increase() see the first crash.
      this.f.crashes.inc(plugin, 0);
      this.f.restarts.inc(plugin, 0);
    }
    const crashed = status.crashCount - (before?.crashCount ?? 0);
    if (crashed > 0) this.f.crashes.inc(plugin, crashed);
    if (before?.state === 'restartPending' && status.state === 'starting') this.f.restarts.inc(plugin);
    if (before && before.state !== status.state) this.f.pluginState.set({ ...plugin, state: before.state }, 0);
    this.f.pluginState.set({ ...plugin, state: status.state }, 1);
  }
}
