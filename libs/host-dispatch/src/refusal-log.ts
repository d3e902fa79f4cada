import type { MessageEvent } from '@host/protocol';
import type { Refusal } from './dispatcher';

/**
 * Log lines of events refused at admission, bounded: the first refusal of a
 * cause (today the host-wide bound of waiting deliveries) in each window is
 * logged with its reason, later ones only counted; the next line of that
 * cause says how many were not logged. A burst of refusals costs a few lines,
 * not one per event.
 */
export class RefusalLog {
  private readonly windows = new Map<string, { start: number; suppressed: number }>();

  constructor(
    private readonly write: (message: string) => void,
    private readonly windowMilliseconds = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  note(event: MessageEvent, refusal: Refusal): void {
    const cause = refusal.code;
    const now = this.now();
    const w = this.windows.get(cause);
    if (w && now - w.start < this.windowMilliseconds) {
      w.suppressed++;
      return;
    }
    const earlier = w?.suppressed ? ` (${w.suppressed} more refused since the last line)` : '';
    this.windows.set(cause, { start: now, suppressed: 0 });
    this.write(`refused ${event.source} event ${event.eventId} before accepting it (${refusal.code}): ${refusal.message}${earlier}`);
  }
}
