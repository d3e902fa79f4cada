import { RpcErrorCode, type CancelReason, type InitializeParams, type MessageEvent } from '@host/protocol';
import type { Session, TransportIO } from '../context';
import type { Plugin } from '../define-plugin';
import { dispatchEvent, handlerFor, type EventCompletion } from '../dispatch';
import { EventSignal } from '../event-signal';
import type { RpcConnection } from './connection';
import { EventScheduler, type EventTask } from './scheduler';

type RuntimeLimits = InitializeParams['runtime'];

/** What the runner needs from the stdio runtime. */
export interface EventRunnerHost {
  readonly plugin: Plugin;
  readonly conn: RpcConnection;
  readonly io: TransportIO;
  /** Sends `events.completed` for an accepted event (fire and forget). */
  complete(eventId: string, completion: EventCompletion): void;
}

/** An event from admission until its handler's completion was sent. */
interface LiveEvent {
  readonly task: EventTask;
  readonly signal: EventSignal;
  deadline: ReturnType<typeof setTimeout> | undefined;
}

/**
 * The events of one stdio process (docs/protocol/v2.md 4.2, 4.8, 6.5): admits
 * `events.message` under the runtime limits, sends the decision (the ACK) as
 * soon as it is made, reports each accepted event's end with
 * `events.completed`, and cancels an event on `events.cancel` or when its
 * handler deadline passes.
 */
export class EventRunner {
  private readonly scheduler: EventScheduler;
  private readonly live = new Map<string, LiveEvent>();
  private session: Session | undefined;

  constructor(
    private readonly host: EventRunnerHost,
    private limits: RuntimeLimits,
  ) {
    this.scheduler = new EventScheduler(limits.maxConcurrentEvents, limits.queueCapacity);
  }

  /** Running handlers (from admission until their completion was sent). */
  get inFlight(): number {
    return this.scheduler.inFlight;
  }

  /** Events waiting for onStart. */
  get queued(): number {
    return this.scheduler.queued;
  }

  /** Applies the handshake: limits and the session handlers run in. */
  initialize(limits: RuntimeLimits, session: Session): void {
    this.limits = limits;
    this.session = session;
    this.scheduler.setLimits(limits.maxConcurrentEvents, limits.queueCapacity);
  }

  /** onStart finished: waiting events start. */
  resume(): void {
    this.scheduler.resume();
  }

  /** plugin.stop or shutdown: waiting events are refused with Stopping; resolves when every running handler completed. */
  drain(): Promise<void> {
    this.scheduler.dropQueued();
    return this.scheduler.idle();
  }

  /** events.message with valid params. */
  message(requestId: string | number, event: MessageEvent): void {
    const { conn } = this.host;
    if (this.live.has(event.eventId)) {
      return conn.respondError(
        requestId,
        RpcErrorCode.InvalidParams,
        `event ${event.eventId} is already being handled; every delivery needs its own eventId`,
      );
    }
    if (!handlerFor(this.host.plugin, event)) {
      // No handler takes it: the decision is known at once and holds no slot.
      return conn.respond(requestId, { eventId: event.eventId, accepted: false, intercepted: false, error: null });
    }
    const session = this.session as Session;
    const signal = new EventSignal(session.signal);
    const task: EventTask = {
      run: async () => {
        try {
          const completion = await dispatchEvent(this.host.plugin, event, this.host.io, session, {
            signal: signal.signal,
            onAck: (ack) => {
              if (!conn.isClosed) conn.respond(requestId, ack);
            },
          });
          if (completion) this.host.complete(event.eventId, completion);
        } finally {
          this.forget(event.eventId);
        }
      },
      refuse: (why) => {
        this.forget(event.eventId);
        if (conn.isClosed) return;
        if (why === 'cancelled')
          conn.respondError(requestId, RpcErrorCode.Cancelled, `event ${event.eventId} was cancelled before its handler started`);
        else conn.respondError(requestId, RpcErrorCode.Stopping, 'the plugin stopped before this queued event started');
      },
    };
    const entry: LiveEvent = { task, signal, deadline: undefined };
    this.live.set(event.eventId, entry);
    // Counted from admission, as the host counts from sending (6.5): the SDK aborts the signal itself.
    entry.deadline = setTimeout(() => this.cancel(event.eventId, 'deadline'), this.limits.handlerDeadlineMilliseconds);
    entry.deadline.unref?.();
    const outcome = this.scheduler.submit(task);
    if (outcome === 'refused') {
      this.forget(event.eventId);
      const { maxConcurrentEvents, queueCapacity } = this.limits;
      conn.respondError(
        requestId,
        RpcErrorCode.Overloaded,
        `all ${maxConcurrentEvents} event handler(s) are busy; event ${event.eventId} was refused`,
        { maxConcurrentEvents, queueCapacity },
      );
    }
  }

  /**
   * events.cancel, or the handler deadline: drops a waiting event (its
   * events.message is answered Cancelled) or aborts a running handler's
   * signal. False when no such event waits or runs.
   */
  cancel(eventId: string, reason: CancelReason): boolean {
    const entry = this.live.get(eventId);
    if (!entry) return false;
    if (this.scheduler.cancelQueued(entry.task)) return true;
    entry.signal.cancel(eventId, reason);
    return true;
  }

  private forget(eventId: string): void {
    const entry = this.live.get(eventId);
    if (!entry) return;
    clearTimeout(entry.deadline);
    entry.signal.dispose();
    this.live.delete(eventId);
  }
}
