import type { DeliveryRecord, EventLogUpdate, EventRecord } from '@host/host-dispatch';
import { isHostErrorCode } from '@host/host-errors';
import type { HostFamilies } from './families';
import { STATS_OUTCOMES, type StatsOutcome, type StatsRing } from './stats-ring';

/** The part of the dispatcher's EventLog the tap needs. */
export interface EventLogFeed {
  subscribe(listener: (update: EventLogUpdate) => void): () => void;
}

const FINAL_OUTCOMES: ReadonlySet<string> = new Set(STATS_OUTCOMES);

/** A label value of an error code: a code of the catalogue as it is, anything else (a plugin's own code) `other`. */
export function codeLabel(code: string): string {
  return isHostErrorCode(code) ? code : 'other';
}

/**
 * Counts deliveries, outcomes and latencies from the event log's updates: the one place where every
 * delivery's decision, completion and timings are recorded already. The log publishes a record each
 * time it changes, so each delivery is counted once per step (decided, completed, final), remembered
 * by the record object itself (the store keeps the objects the dispatcher changes). The dashboard's
 * series (`stats`) are fed at the same points, so they and the metrics count the same facts once each;
 * either may be absent (metrics switched off keep the dashboard's series).
 */
export function tapEventLog(feed: EventLogFeed, f: HostFamilies | undefined, stats?: StatsRing): () => void {
  const decided = new WeakSet<DeliveryRecord>();
  const handled = new WeakSet<DeliveryRecord>();
  const final = new WeakSet<DeliveryRecord>();
  const delivery = (d: DeliveryRecord): void => {
    const plugin = { plugin_id: d.pluginId };
    if (d.done && d.durationMs !== null && !decided.has(d)) {
      decided.add(d);
      f?.decisionSeconds.observe(plugin, d.durationMs / 1000);
    }
    if (d.completion && !handled.has(d)) {
      handled.add(d);
      if (d.completion.durationMs !== null) f?.handlerSeconds.observe(plugin, d.completion.durationMs / 1000);
    }
    if (FINAL_OUTCOMES.has(d.state) && !final.has(d)) {
      final.add(d);
      f?.deliveries.inc({ ...plugin, outcome: d.state });
      const error = d.completion?.error ?? d.error;
      if (d.state === 'failed' || d.state === 'expired') f?.deliveryErrors.inc({ ...plugin, code: codeLabel(error?.code ?? 'other') });
      stats?.deliveryFinal(d.pluginId, d.state as StatsOutcome, error);
    }
  };
  const completed = (r: EventRecord): void => {
    if (r.deliveries.length === 0 || r.completedAt === null) return;
    const seconds = (Date.parse(r.completedAt) - Date.parse(r.receivedAt)) / 1000;
    if (seconds < 0) return;
    f?.eventSeconds.observe({ provider: r.source }, seconds);
    stats?.eventCompleted(seconds * 1000);
  };
  return feed.subscribe((u) => {
    if (u.type === 'event') {
      f?.eventsReceived.inc({ provider: u.record.source });
      stats?.eventReceived();
    } else if (u.type === 'delivery') u.record.deliveries.forEach(delivery);
    else if (u.type === 'completed') {
      // A final state reached without its own update (a record completed at once) is counted here.
      u.record.deliveries.forEach(delivery);
      completed(u.record);
    }
  });
}
