import { createHash } from 'node:crypto';
import { HostError, type OutboundRecord, type OutboundRequest, type OutboundSink } from '@host/host-core';
import type { Dispatcher } from '@host/host-dispatch';
import type { SendResult } from '@host/protocol';
import type { ClusterLog, HeldLeases } from './lease-keeper';
import type { SqlReplyRecords } from './sql-reply-records';

/** Replies of one (event, plugin) counted at most, to number them; oldest dropped beyond it. */
const MAX_REPLY_COUNTERS = 10_000;
/** Replies of one handling carried to the origin with the outcome at most (more: the origin reads them). */
const MAX_CARRIED_REPLIES = 32;

export interface ReplyOutboxOptions {
  /** Where replies and sends are recorded (the queue's {@link SqlDeliveryQueue.records}). */
  records: Pick<SqlReplyRecords, 'recordReply' | 'noteReply' | 'recordSend' | 'noteSend' | 'claimUnsent'>;
  leases: Pick<HeldLeases, 'epochOf'>;
  dispatcher: () => Dispatcher;
  log: ClusterLog;
}

/** One delivery of an (event, plugin) in this process, as the outbox follows it for the worker. */
export interface HandlingRecord {
  /** The plugin got the event: sends from here on are this handling's; a repeat first sends what the one before left unsent. */
  handed(): void;
  /** The plugin's work on the event ended: its sends are no longer keyed to it. */
  handled(): void;
  /**
   * Waits until the replies sent in this handling are marked sent; answers their records when this process sent
   * every reply of the plugin to the event (they go to the origin with the outcome), else undefined.
   */
  replies(): Promise<OutboundRecord[] | undefined>;
  /** The delivery is over. */
  close(): void;
}

/** The replies sent in one handling, by reply number. `complete`: no reply of the handling was recorded by another process. */
interface SentReplies {
  records: (OutboundRecord | null)[];
  complete: boolean;
  noting: Promise<void>[];
}

/**
 * The outbox in front of the host's sink: each reply, and each send made while
 * a plugin handles an event here, is numbered and recorded in the database
 * before it is sent, so a delivery repeated after a crash or a takeover does
 * not send it again (it is answered as it was recorded), and one recorded but
 * never marked sent is sent once, by the process that claims it.
 */
export class ReplyOutbox {
  private readonly replyCounts = new Map<string, number>();
  private readonly observed = new WeakMap<OutboundRequest, OutboundRecord>();
  /** The replies sent by each (event, plugin) delivered here now: carried to the origin with the outcome. */
  private readonly sentReplies = new Map<string, SentReplies>();
  /** Events each local plugin handles now (handed to it, not completed), with the sends made meanwhile. */
  private readonly handling = new Map<string, Map<string, { sends: number }>>();
  private inner: OutboundSink | undefined;

  constructor(private readonly o: ReplyOutboxOptions) {}

  /** Wraps the host's sink: replies, and sends made while handling an event, are numbered and recorded before they are sent. */
  outbound(inner: OutboundSink): OutboundSink {
    this.inner = inner;
    return { send: (request) => (request.kind === 'reply' ? this.sendRecorded(inner, request) : this.sendKeyed(inner, request)) };
  }

  /** Keeps what the host's sink recorded of a request, for the reply's row. */
  observe(request: OutboundRequest, outbound: OutboundRecord): void {
    this.observed.set(request, outbound);
  }

  /** Follows one delivery of `eventId` to `pluginId` here; `firstAttempt`: no process delivered it before. */
  open(eventId: string, pluginId: string, firstAttempt: boolean): HandlingRecord {
    const key = `${eventId}\u0000${pluginId}`;
    // Replies of a first delivery are all sent here: the origin gets their records with the outcome.
    const sent: SentReplies = { records: [], complete: firstAttempt, noting: [] };
    this.sentReplies.set(key, sent);
    const handled = () => {
      const h = this.handling.get(pluginId);
      h?.delete(eventId);
      if (h?.size === 0) this.handling.delete(pluginId);
    };
    return {
      handed: () => {
        const h = this.handling.get(pluginId) ?? new Map<string, { sends: number }>();
        this.handling.set(pluginId, h.set(eventId, { sends: 0 }));
        if (!firstAttempt) void this.sendLeftOver(eventId, pluginId).catch(() => undefined);
      },
      handled,
      replies: async () => {
        // The replies are marked sent before anyone learns the outcome: a handling repeated after a crash sends none again.
        await Promise.all(sent.noting);
        return sent.complete && this.sentReplies.get(key) === sent ? sent.records.filter((r) => r !== null) : undefined;
      },
      close: () => {
        if (this.sentReplies.get(key) === sent) this.sentReplies.delete(key);
        handled();
      },
    };
  }

  private async sendRecorded(inner: OutboundSink, request: OutboundRequest): Promise<SendResult> {
    if (request.eventId === undefined) return inner.send(request);
    const { eventId, pluginId } = request;
    // A reply the host's sink refuses anyway (not this plugin's event, or its window closed) is neither numbered nor recorded.
    if (this.o.dispatcher().replies.find(pluginId, eventId).status !== 'open') return inner.send(request);
    const key = `${eventId}\u0000${pluginId}`;
    const n = (this.replyCounts.get(key) ?? 0) + 1;
    this.replyCounts.delete(key);
    this.replyCounts.set(key, n);
    if (this.replyCounts.size > MAX_REPLY_COUNTERS) this.replyCounts.delete(this.replyCounts.keys().next().value!);
    // Recorded before it is sent: after a takeover, a reply recorded already is not sent again.
    const { fresh, reply } = await this.o.records.recordReply(
      eventId,
      pluginId,
      n,
      { message: request.message },
      this.o.leases.epochOf(pluginId),
    );
    if (!fresh) {
      const sent = this.sentReplies.get(key);
      if (sent) sent.complete = false;
      // Recorded by a replica that died before marking it sent: sent now, by the one process that claims it.
      if (!reply.sent) {
        const [claimed] = await this.o.records.claimUnsent('reply', eventId, pluginId, n);
        if (claimed) return this.sendReplyNow(inner, { ...request, sentBefore: true }, eventId, n, reply.sequence);
      }
      // Sent before (or being sent by the process that claimed it): answered as it was recorded, not sent again.
      const found = this.o.dispatcher().replies.find(pluginId, eventId);
      const before = reply.outbound;
      if (before?.error) throw new HostError(before.error.code as never, before.error.message);
      const target = before?.target ?? (found.status !== 'unknown' ? { ...found.reference.target } : { type: 'group' as const, id: '' });
      // Handled again after a crash or takeover: the event's record here shows the reply the user got before.
      if (before) this.showOnRecord(eventId, before);
      return { accepted: true, ...(before?.messageId ? { messageId: before.messageId } : {}), target };
    }
    return this.sendReplyNow(inner, request, eventId, n, reply.sequence);
  }

  /** Adds a reply sent by an earlier handling to the event's record in this host's log, once. */
  private showOnRecord(eventId: string, outbound: OutboundRecord): void {
    const record = this.o.dispatcher().events.get(eventId);
    if (!record) return;
    const same = (o: OutboundRecord) => o.pluginId === outbound.pluginId && o.at === outbound.at && o.messageId === outbound.messageId;
    if (record.outbound.some(same)) return;
    record.outbound.push(outbound);
    this.o.dispatcher().events.publish({ type: 'outbound', record });
  }

  /** Sends a recorded reply with the sequence number the database gave it (whichever replica sends) and marks it sent. */
  private async sendReplyNow(
    inner: OutboundSink,
    request: OutboundRequest,
    eventId: string,
    n: number,
    sequence: number,
  ): Promise<SendResult> {
    const { pluginId } = request;
    const found = this.o.dispatcher().replies.find(pluginId, eventId);
    if (found.status !== 'unknown') found.reference.sequence = sequence - 1;
    try {
      return await inner.send(request);
    } finally {
      const outbound = this.observed.get(request) ?? null;
      const sent = this.sentReplies.get(`${eventId}\u0000${pluginId}`);
      if (sent && n <= MAX_CARRIED_REPLIES) sent.records[n - 1] = outbound;
      else if (sent) sent.complete = false;
      const noting = this.o.records.noteReply(eventId, pluginId, n, outbound).catch(() => undefined);
      // While the plugin handles the event here, the mark is written alongside (the outcome waits for it); else before answering.
      if (sent && sent.noting.length < MAX_CARRIED_REPLIES) sent.noting.push(noting);
      else await noting;
    }
  }

  /**
   * messages.send made while the plugin handles an event on this replica: the
   * n-th send of that handling, recorded before it is sent; the plugin
   * handling the event again after a takeover gets the recorded answer
   * instead of a second message. The event is the one the send names
   * (`eventId`, which the SDKs fill in inside a handler), looked up among the
   * events this plugin handles here only; a send naming none is keyed by the
   * one event in flight, when there is exactly one. Sends naming an event not
   * in flight for this plugin, outside any handling (timers), or naming none
   * while several events are handled at once go out unrecorded.
   */
  private async sendKeyed(inner: OutboundSink, request: OutboundRequest): Promise<SendResult> {
    const keyed = this.handlingOf(request);
    if (!keyed) return inner.send(request);
    const [eventId, h] = keyed;
    const n = ++h.sends;
    const digest = createHash('sha256')
      .update(JSON.stringify({ target: request.target ?? null, message: request.message }))
      .digest('hex');
    const { fresh, send } = await this.o.records.recordSend(
      eventId,
      request.pluginId,
      n,
      digest,
      {
        target: request.target ?? null,
        message: request.message,
        // Kept so a left-over send goes out as it was asked (its event's bot by default).
        ...(request.eventId !== undefined ? { eventId } : {}),
      },
      this.o.leases.epochOf(request.pluginId),
    );
    if (!fresh) {
      if (send.digest !== digest) {
        // Not the message sent the first time (the handler took another path): sent, unrecorded.
        this.o.log('warn', `cluster: ${request.pluginId} sent another message as send ${n} of ${eventId} than before; sent unrecorded`);
        return inner.send(request);
      }
      if (!send.sent) {
        const [claimed] = await this.o.records.claimUnsent('send', eventId, request.pluginId, n);
        if (claimed) return this.sendNow(inner, request, eventId, n);
      }
      const result = send.result;
      if (result && 'error' in result) throw new HostError(result.error.code as never, result.error.message);
      return result ?? { accepted: true, target: request.target! };
    }
    return this.sendNow(inner, request, eventId, n);
  }

  /** The handling a send belongs to: the one its eventId names (this plugin's, in flight here), else the only one in flight. */
  private handlingOf(request: OutboundRequest): [string, { sends: number }] | undefined {
    const handling = this.handling.get(request.pluginId);
    if (request.eventId !== undefined) {
      const h = handling?.get(request.eventId);
      return h ? [request.eventId, h] : undefined;
    }
    return handling?.size === 1 ? [...handling][0] : undefined;
  }

  /** Sends a recorded send and marks it sent with the provider's answer (or its refusal). */
  private async sendNow(inner: OutboundSink, request: OutboundRequest, eventId: string, n: number): Promise<SendResult> {
    let result: unknown;
    try {
      const sent = await inner.send(request);
      result = sent;
      return sent;
    } catch (e) {
      const err = e as { code?: unknown; message?: unknown };
      result = { error: { code: typeof err.code === 'string' ? err.code : 'message.provider.failed', message: String(err.message ?? e) } };
      throw e;
    } finally {
      await this.o.records
        .noteSend(eventId, request.pluginId, n, result ?? null, this.observed.get(request) ?? null)
        .catch(() => undefined);
    }
  }

  /**
   * A delivery again after a takeover: replies and sends of the event that the
   * replica before recorded and never marked sent are sent now, once (claimed
   * row by row), before the plugin's own repeat could find them.
   */
  private async sendLeftOver(eventId: string, pluginId: string): Promise<void> {
    const inner = this.inner;
    if (!inner) return;
    for (const kind of ['reply', 'send'] as const) {
      for (const row of await this.o.records.claimUnsent(kind, eventId, pluginId)) {
        const recorded = row.request;
        const request: OutboundRequest =
          kind === 'reply'
            ? { pluginId, kind, eventId, message: recorded.message, sentBefore: true }
            : {
                pluginId,
                kind,
                ...(recorded.eventId !== undefined ? { eventId: recorded.eventId } : {}),
                message: recorded.message,
                ...(recorded.target ? { target: recorded.target } : {}),
              };
        this.o.log(
          'info',
          `cluster: sending ${kind} ${row.n} of ${pluginId} to ${eventId}, recorded by a replica that stopped before sending it`,
        );
        await (
          kind === 'reply' ? this.sendReplyNow(inner, request, eventId, row.n, row.sequence!) : this.sendNow(inner, request, eventId, row.n)
        ).catch((e: Error) =>
          this.o.log('warn', `cluster: the left-over ${kind} ${row.n} of ${pluginId} to ${eventId} failed: ${e.message}`),
        );
      }
    }
  }
}
