import type { CancelReason } from '@host/protocol';
import { PluginSdkError } from './errors';

/**
 * The cancellation signal of one event (its handler's `ctx.signal`): aborted
 * by `cancel()` (events.cancel, the handler deadline) or with the session's
 * signal (the plugin stops or loses its host), whichever comes first.
 * `dispose()` unhooks it from the session's signal once the handler ended,
 * so a long-lived plugin does not collect one listener per event.
 */
export class EventSignal {
  private readonly controller = new AbortController();
  private readonly unlink: () => void;

  constructor(parent: AbortSignal) {
    if (parent.aborted) {
      this.controller.abort(parent.reason);
      this.unlink = () => undefined;
      return;
    }
    const follow = () => this.controller.abort(parent.reason);
    parent.addEventListener('abort', follow, { once: true });
    this.unlink = () => parent.removeEventListener('abort', follow);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Aborts the signal with a PluginSdkError SDK_EVENT_CANCELLED naming the event and why. */
  cancel(eventId: string, reason: CancelReason): void {
    if (this.controller.signal.aborted) return;
    const why = reason === 'deadline' ? 'its handler deadline passed' : 'the host stopped waiting for its decision (ackTimeout)';
    this.controller.abort(new PluginSdkError('SDK_EVENT_CANCELLED', `Event ${eventId} was cancelled: ${why}.`));
  }

  dispose(): void {
    this.unlink();
  }
}
