import { HostError, isHostError, type ErrorDetails, type OutboundRequest, type OutboundSink } from '@host/host-core';
import { defaultRegistry, renderParsedMessage, type ProviderBody, type RendererRegistry } from '@host/messages';
import type { MessageErrorCode, MessagePart, Permission, SendResult, Target } from '@host/protocol';
import type { EventLog, EventRecord, OutboundRecord } from './event-log';
import { IsoTimeCache } from './iso-time';
import type { MessageProvider, ReplyContext } from '@host/host-core';
import type { ProviderRegistry } from './provider';
import type { ReplyReferences } from './reply-references';

export interface OutboundSinkOptions {
  events: EventLog;
  /** Which plugin may answer which event, and until when. */
  replies: ReplyReferences;
  providers: ProviderRegistry;
  /** Declared permissions of a plugin; undefined for an unknown plugin. */
  permissionsOf: (pluginId: string) => readonly Permission[] | undefined;
  renderers?: RendererRegistry;
  now?: () => number;
  /** Called with what became of each request as it is recorded (replicas keep it with the reply). */
  observe?: (request: OutboundRequest, outbound: OutboundRecord) => void;
}

/** Outbound messages kept per event record. */
export const MAX_OUTBOUND_PER_EVENT = 50;

/** Bot account ids named in one error's message and details, at most. */
const MAX_NAMED_ACCOUNTS = 20;

function namedAccounts(ids: readonly string[]): string {
  const shown = ids.slice(0, MAX_NAMED_ACCOUNTS).map((id) => JSON.stringify(id));
  return ids.length > MAX_NAMED_ACCOUNTS ? `${shown.join(', ')} and ${ids.length - MAX_NAMED_ACCOUNTS} more` : shown.join(', ');
}

function refuse(code: MessageErrorCode, message: string, details?: ErrorDetails): HostError {
  return new HostError(code, message, details);
}

function mentionsEveryone(parts: readonly MessagePart[]): boolean {
  const stack = [...parts];
  while (stack.length > 0) {
    const p = stack.pop()!;
    if (p.type === 'mention' && p.target === 'everyone') return true;
    if (p.type === 'composite') stack.push(...p.parts);
  }
  return false;
}

/**
 * Where plugin messages go, whatever the transport: checks the plugin's
 * permissions, resolves a reply's target from the event it answers, renders
 * with @host/messages for the provider and hands the body to the provider.
 * Refusals throw a HostError with a `message.*` code (and
 * `details.permission` for `message.permission.denied`).
 */
export class HostOutboundSink implements OutboundSink {
  private readonly now: () => number;
  private readonly renderers: RendererRegistry;
  private readonly clock = new IsoTimeCache();

  constructor(private readonly o: OutboundSinkOptions) {
    this.now = o.now ?? Date.now;
    this.renderers = o.renderers ?? defaultRegistry;
  }

  async send(request: OutboundRequest): Promise<SendResult> {
    const { pluginId, message } = request;
    // A send's eventId counts only for an event delivered to this plugin (4.7): any other is ignored, never refused.
    const eventId = request.kind === 'send' ? this.ownEvent(request) : request.eventId;
    const permissions = this.o.permissionsOf(pluginId) ?? [];
    const needed: Permission = request.kind === 'reply' ? 'messages.reply' : 'messages.send';
    const missing: Permission | undefined = !permissions.includes(needed)
      ? needed
      : mentionsEveryone(message.parts) && !permissions.includes('messages.mentionEveryone')
        ? 'messages.mentionEveryone'
        : undefined;
    if (missing) {
      const what = missing === 'messages.mentionEveryone' ? 'mention everyone' : `${request.kind} messages`;
      const text = `${pluginId} needs the permission "${missing}" to ${what}; declare it in manifest.json`;
      this.notePermissionRefusal(request, text, eventId);
      throw refuse('message.permission.denied', text, { permission: missing });
    }
    let target: Target;
    let providerId: string | undefined;
    let provider: MessageProvider | undefined;
    let replyTo: ReplyContext | undefined;
    let record: EventRecord | undefined;
    if (request.kind === 'reply') {
      const eventId = request.eventId ?? '';
      // Only a plugin the event was handed to may answer it (not one whose queue refused or dropped it),
      // while the provider's reply window is open, whether or not the event log still shows the event.
      const found = this.o.replies.find(pluginId, eventId);
      if (found.status === 'unknown') {
        throw refuse(
          'message.reference.unknown',
          `event ${JSON.stringify(eventId)} was not delivered to ${pluginId} or is too old to answer`,
        );
      }
      const ref = found.reference;
      record = this.o.events.get(eventId);
      if (record && record.source !== ref.source) record = undefined;
      if (found.status === 'expired') {
        throw this.fail(
          record,
          request,
          { ...ref.target },
          'message.reference.expired',
          `the reply window of event ${eventId} closed at ${ref.replyUntilText}`,
        );
      }
      target = { ...ref.target };
      providerId = ref.source;
      const sequence = ++ref.sequence;
      // Shown with the event while the log keeps it.
      if (record) record.replySequence = sequence;
      replyTo = {
        eventId,
        messageId: ref.messageId,
        sequence,
        botAccountId: ref.botAccountId,
        ...(request.sentBefore ? { sentBefore: true } : {}),
      };
    } else {
      const routed = this.routeSend(request, eventId);
      target = routed.target;
      provider = routed.provider;
      // A send to the chat of the event it comes from, in its reply window, answers that message (QQ Bot: msg_id).
      const own = eventId === undefined ? undefined : this.o.replies.find(pluginId, eventId);
      const ref = own?.status === 'open' ? own.reference : undefined;
      if (
        ref &&
        ref.source === provider.id &&
        ref.botAccountId === target.botAccountId &&
        ref.target.type === target.type &&
        ref.target.id === target.id
      ) {
        replyTo = { eventId: ref.eventId, messageId: ref.messageId, sequence: ++ref.sequence, botAccountId: ref.botAccountId };
      }
    }
    if (!provider && providerId !== undefined) provider = this.o.providers.get(providerId);
    if (!provider) {
      const source = providerId ?? 'none configured';
      throw this.fail(
        record,
        request,
        target,
        'message.target.invalid',
        `no message provider "${source}" is configured in this host to send to ${target.type} ${target.id}`,
        eventId,
      );
    }
    const rendered = renderParsedMessage(provider.renderer, message, target, this.renderers);
    if (!rendered.ok) throw this.fail(record, request, target, rendered.error.code, rendered.error.message, eventId);
    let sent: Awaited<ReturnType<typeof provider.send>>;
    try {
      sent = await provider.send(target, rendered.value, replyTo, message);
    } catch (e) {
      // Recorded, so the event log shows what the provider refused, then passed on to the plugin.
      this.note(
        record,
        request,
        target,
        {
          body: rendered.value,
          // A provider that says why (a message.provider.* code) is recorded with its code.
          error: { code: isHostError(e) ? e.code : 'delivery.provider_failed', message: e instanceof Error ? e.message : String(e) },
        },
        eventId,
      );
      throw e;
    }
    this.note(record, request, target, { body: sent.requestBody, messageId: sent.messageId, error: null }, eventId);
    return { accepted: true, messageId: sent.messageId, target, ...(sent.format ? { format: sent.format } : {}) };
  }

  /** The event a send names, when it was delivered to the sending plugin (and is still remembered); else none. */
  private ownEvent(request: OutboundRequest): string | undefined {
    if (request.eventId === undefined) return undefined;
    return this.o.replies.find(request.pluginId, request.eventId).status === 'unknown' ? undefined : request.eventId;
  }

  /**
   * Which bot sends a `messages.send` (docs/protocol/v2.md 4.7): the one
   * `target.botAccountId` names; else the bot of the event the send comes
   * from (its `eventId`, or an HTTP plugin's response), when that event was
   * delivered to this plugin; else the host's only bot account. Refused when
   * the named bot is unknown or when several could send.
   */
  private routeSend(request: OutboundRequest, eventId: string | undefined): { target: Target; provider: MessageProvider } {
    const asked = request.target!;
    const refuseSend = (code: MessageErrorCode, message: string, details: ErrorDetails): never => {
      this.note(undefined, request, asked, { body: null, error: { code, message } }, eventId);
      throw refuse(code, message, details);
    };
    let botAccountId = asked.botAccountId;
    if (botAccountId === undefined && eventId !== undefined) {
      const found = this.o.replies.find(request.pluginId, eventId);
      if (found.status !== 'unknown') botAccountId = found.reference.botAccountId;
    }
    if (botAccountId !== undefined) {
      const provider = this.o.providers.forBotAccount(botAccountId);
      if (!provider) {
        const known = this.o.providers.botAccountIds();
        refuseSend(
          'message.target.bot_unknown',
          `this host has no bot account ${JSON.stringify(botAccountId)}` +
            (known.length ? `; its bot accounts are ${namedAccounts(known)}` : '; it has no bot account'),
          { botAccountId, botAccountIds: known.slice(0, MAX_NAMED_ACCOUNTS) },
        );
      }
      return { target: { type: asked.type, id: asked.id, botAccountId }, provider: provider! };
    }
    const all = this.o.providers.botAccountIds();
    if (all.length !== 1) {
      refuseSend(
        all.length === 0 ? 'message.target.invalid' : 'message.target.bot_required',
        all.length === 0
          ? `no message provider with a bot account is configured in this host to send to ${asked.type} ${asked.id}`
          : `this host has ${all.length} bot accounts (${namedAccounts(all)}); name the one that sends in target.botAccountId`,
        { botAccountIds: all.slice(0, MAX_NAMED_ACCOUNTS) },
      );
    }
    const only = all[0]!;
    return { target: { type: asked.type, id: asked.id, botAccountId: only }, provider: this.o.providers.forBotAccount(only)! };
  }

  private fail(
    record: EventRecord | undefined,
    request: OutboundRequest,
    target: Target,
    code: MessageErrorCode,
    message: string,
    eventId = request.eventId,
  ): HostError {
    this.note(record, request, target, { body: null, error: { code, message } }, eventId);
    return refuse(code, message);
  }

  /** A refusal for a missing permission, in the event log with the event it answers (or as a send). */
  private notePermissionRefusal(request: OutboundRequest, message: string, eventId: string | undefined): void {
    this.noteRefusal(request, { code: 'message.permission.denied', message }, eventId);
  }

  /**
   * Records a refusal decided before this sink saw the request (the media guard's checks of image and file
   * parts), on the event the reply answers, or as a send, as its own refusals are recorded: the event log then
   * shows the code with the delivery the plugin was answering.
   */
  noteRefusal(
    request: OutboundRequest,
    error: { code: string; message: string },
    eventId: string | undefined = request.kind === 'send' ? this.ownEvent(request) : request.eventId,
  ): void {
    let target: Target | undefined = request.target;
    let record: EventRecord | undefined;
    if (request.kind === 'reply') {
      const found = this.o.replies.find(request.pluginId, request.eventId ?? '');
      if (found.status === 'unknown') return; // not this plugin's event: nothing to show it with
      target = { ...found.reference.target };
      record = this.o.events.get(request.eventId ?? '');
      if (record && record.source !== found.reference.source) record = undefined;
    }
    if (target) this.note(record, request, target, { body: null, error }, eventId);
  }

  /**
   * Records what became of one outbound request, on its event or as a send.
   * `eventId` links it to its event: a reply's, or the event a send came from
   * when that event was delivered to the sending plugin.
   */
  private note(
    record: EventRecord | undefined,
    request: OutboundRequest,
    target: Target,
    result: Pick<OutboundRecord, 'body' | 'messageId' | 'error'>,
    eventId: string | undefined,
  ): void {
    const outbound: OutboundRecord = {
      pluginId: request.pluginId,
      kind: request.kind,
      ...(eventId ? { eventId } : {}),
      target,
      body: result.body,
      ...(result.messageId !== undefined ? { messageId: result.messageId } : {}),
      at: this.clock.at(this.now()),
      error: result.error,
    };
    this.o.observe?.(request, outbound);
    if (record) {
      // Bounded like the rest of the event log, whatever a plugin sends.
      if (record.outbound.length < MAX_OUTBOUND_PER_EVENT) record.outbound.push(outbound);
      this.o.events.publish({ type: 'outbound', record });
    } else {
      this.o.events.publish({ type: 'send', outbound });
    }
  }
}

export type { ProviderBody };
