import type { DeliveryRecord } from '@host/host-dispatch';
import type { EventLogFeed } from './event-log-tap';

/** Failed deliveries logged per plugin within one window; the rest are counted into one line at its end. */
export const DELIVERY_FAILURE_LINES_PER_WINDOW = 10;
export const DELIVERY_FAILURE_WINDOW_MILLISECONDS = 10_000;

export type DeliveryFailureLine = (message: string, fields: { pluginId: string; eventId?: string }) => void;

/**
 * Logs each delivery that failed or expired with its plugin and event id, so a log collector can put the
 * host's line beside the plugin's own lines about that event (in its log, GET /api/plugins/{id}/logs).
 * Bounded per plugin: a crash-looping plugin gets `DELIVERY_FAILURE_LINES_PER_WINDOW` lines per window,
 * then one line with the count of the others.
 */
export function logDeliveryFailures(feed: EventLogFeed, write: DeliveryFailureLine, now: () => number = Date.now): () => void {
  const logged = new WeakSet<DeliveryRecord>();
  const windows = new Map<string, { start: number; lines: number; suppressed: number }>();
  const note = (eventId: string, d: DeliveryRecord): void => {
    const t = now();
    let w = windows.get(d.pluginId);
    if (!w || t - w.start >= DELIVERY_FAILURE_WINDOW_MILLISECONDS) {
      if (w?.suppressed)
        write(`${d.pluginId}: ${w.suppressed} more failed deliveries were not logged one by one (see the event log)`, {
          pluginId: d.pluginId,
        });
      w = { start: t, lines: 0, suppressed: 0 };
      windows.set(d.pluginId, w);
    }
    if (w.lines >= DELIVERY_FAILURE_LINES_PER_WINDOW) {
      w.suppressed++;
      return;
    }
    w.lines++;
    const error = d.completion?.error ?? d.error;
    write(
      `${d.pluginId} ${d.state === 'expired' ? 'never got' : 'failed'} event ${eventId}: ${error ? `${error.code}: ${error.message}` : d.state}`,
      {
        pluginId: d.pluginId,
        eventId,
      },
    );
  };
  return feed.subscribe((u) => {
    if (u.type !== 'delivery' && u.type !== 'completed') return;
    for (const d of u.record.deliveries)
      if ((d.state === 'failed' || d.state === 'expired') && !logged.has(d)) {
        logged.add(d);
        note(u.record.eventId, d);
      }
  });
}
