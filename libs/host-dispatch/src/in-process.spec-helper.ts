import {
  answeredDelivery,
  type CompletionOutcome,
  type Delivery,
  type DeliveryOutcome,
  type OutboundSink,
  type PluginEndpoint,
  type PluginRouting,
} from '@host/host-core';
import type { ProviderBody } from '@host/messages';
import type { z } from 'zod';
import { CommandSchema, type CancelReason, type MessageEvent, type Permission, type Target } from '@host/protocol';
import type { MessageProvider, ProviderSendResult, ReplyContext } from '@host/host-core';

type Ack = Omit<DeliveryOutcome, 'pluginId' | 'durationMs'>;
/** Routing as a test writes it: commands in manifest form (defaults optional). */
export type RouteInput = Partial<Omit<PluginRouting, 'commands' | 'permissions'>> & {
  commands?: z.input<typeof CommandSchema>[];
  permissions?: string[];
};

/** The work after an accepted decision; resolves with how it ended. */
export type Work = (event: MessageEvent, sink: OutboundSink) => Promise<Partial<CompletionOutcome>>;

/**
 * A plugin that runs in the test process: its handler gets the event exactly
 * as a transport would deliver it and answers with its decision. Without
 * `work` the answer is also the end (like an HTTP plugin); with it, `work`
 * runs after an accepted decision and its end is the completion (like a
 * stdio plugin). It is a complete PluginEndpoint, so the dispatcher runs
 * unchanged.
 */
export class InProcessPlugin implements PluginEndpoint {
  readonly transport = 'http' as const;
  available = true;
  /** Not available yet, but about to be (a plugin starting): events wait for it. */
  starting = false;
  /** Should take events but cannot (a failed plugin): a recipient whose delivery fails with delivery.unavailable. */
  down = false;
  readonly received: MessageEvent[] = [];
  readonly cancelled: { eventId: string; reason: CancelReason }[] = [];

  constructor(
    readonly pluginId: string,
    private readonly route: RouteInput,
    private readonly handler: (event: MessageEvent, sink: OutboundSink) => Promise<Partial<Ack>> = async () => ({}),
    private readonly work?: Work,
  ) {}

  routing(): PluginRouting {
    return {
      pluginId: this.pluginId,
      eventSubscriptions: [{ eventType: 'message.created' }],
      canIntercept: false,
      ...this.route,
      permissions: (this.route.permissions ?? ['messages.reply']) as Permission[],
      commands: (this.route.commands ?? []).map((c) => CommandSchema.parse(c)),
    };
  }

  isAvailable(): boolean {
    return this.available;
  }

  isStarting(): boolean {
    return this.starting;
  }

  isDown(): boolean {
    return this.down;
  }

  deliver(event: MessageEvent, sink: OutboundSink): Delivery {
    if (!this.available) {
      const error = { code: 'delivery.unavailable', message: `${this.pluginId} is not running` };
      return answeredDelivery(Promise.resolve({ pluginId: this.pluginId, accepted: false, intercepted: false, error, durationMs: 0 }));
    }
    this.received.push(event);
    const decision: Promise<DeliveryOutcome> = this.handler(event, sink).then(
      (ack) => ({ pluginId: this.pluginId, accepted: true, intercepted: false, error: null, durationMs: 0, ...ack }),
      (e: Error) => ({
        pluginId: this.pluginId,
        accepted: false,
        intercepted: false,
        error: { code: 'delivery.failed', message: e.message },
        durationMs: 0,
      }),
    );
    const work = this.work;
    const completion: Promise<CompletionOutcome> = decision.then((d) =>
      d.accepted && work ? work(event, sink).then((c) => ({ error: null, ...c })) : { error: null },
    );
    return { decision, completion, cancel: (reason) => void this.cancelled.push({ eventId: event.eventId, reason }) };
  }
}

/** A provider that keeps what it was asked to send, with QQ-style passive reply fields. */
export class KeepingProvider implements MessageProvider {
  readonly renderer = 'qqbot';
  readonly sent: { target: Target; body: unknown }[] = [];

  constructor(
    readonly id = 'console',
    private readonly bots: readonly string[] = ['bot-1'],
  ) {}

  botAccountIds(): readonly string[] {
    return this.bots;
  }

  async send(target: Target, body: ProviderBody, replyTo?: ReplyContext): Promise<ProviderSendResult> {
    const requestBody = replyTo ? { ...body, msg_id: replyTo.messageId, msg_seq: replyTo.sequence } : body;
    this.sent.push({ target, body: requestBody });
    return { messageId: `out-${this.sent.length}`, requestBody };
  }
}

let counter = 0;
export function makeEvent(text: string, over: Partial<MessageEvent> = {}): MessageEvent {
  counter++;
  return {
    eventId: `ev-${counter}`,
    eventType: 'message.created',
    timestamp: new Date().toISOString(),
    source: 'console',
    bot: { botAccountId: 'bot-1', platform: 'console' },
    conversation: { type: 'group', conversationId: 'group-1' },
    sender: { provider: 'console', mentionId: 'user-1' },
    message: { id: `m-${counter}`, content: text, attachments: [], mentions: [] },
    messageReference: { messageId: `m-${counter}`, targetType: 'group', targetId: 'group-1', restrictions: [] },
    ...over,
  };
}

/**
 * Waits until `done()` holds (checked after each turn of the event loop), for at most `ms`; fails naming `what`.
 * For a state the code under test reaches by itself; a wait that proves something did not happen stays a wait.
 */
export async function until(done: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not reached in ${ms} ms: ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}
