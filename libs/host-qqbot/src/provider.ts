import { HostError, isHostError, type MediaStore, type MessageProvider, type ProviderSendResult, type ReplyContext } from '@host/host-core';
import { renderParsedMessage, type ProviderBody, type QQMessageBody } from '@host/messages';
import type { OutgoingMessage, Target } from '@host/protocol';
import type { QqBotAccount, QqBotAccounts } from './accounts';
import { DEFAULT_REPLY_WINDOWS, EVENT_ANCHOR_PREFIX, type ReplyWindows } from './event-mapping';
import { MediaCache } from './media-cache';
import { ReplyBudget, type ReplyBudgetOptions } from './reply-budget';

export interface QqBotProviderOptions {
  /** The reply windows the budget forgets messages after (default: the platform's). */
  replyWindows?: ReplyWindows;
  budget?: ReplyBudgetOptions;
  /** Uploaded files kept for reuse (default: a MediaCache of 1000 entries). */
  media?: MediaCache;
  /** The bytes plugins uploaded (media.upload): an image part with a mediaId is sent from here as `file_data`. */
  uploads?: MediaStore;
}

/** The rich-media upload path for `target` (rich-media.md of tencent-connect/bot-docs); groups and users only. */
export function filesPath(target: Target): string {
  const id = encodeURIComponent(target.id);
  return target.type === 'group' ? `/v2/groups/${id}/files` : `/v2/users/${id}/files`;
}

/**
 * The passive-reply fields of a reply: `msg_id` for a received message, `event_id` for an event the platform
 * lets a bot answer by its id (its reference's message id starts with `event:`), and `msg_seq`.
 */
function replyFields(replyTo: ReplyContext, withSequence: boolean): Record<string, unknown> {
  const anchor = replyTo.messageId.startsWith(EVENT_ANCHOR_PREFIX)
    ? { event_id: replyTo.messageId.slice(EVENT_ANCHOR_PREFIX.length) }
    : { msg_id: replyTo.messageId };
  return withSequence ? { ...anchor, msg_seq: replyTo.sequence } : anchor;
}

/** The OpenAPI path a message to `target` is posted to. */
export function messagePath(target: Target): string {
  const id = encodeURIComponent(target.id);
  switch (target.type) {
    case 'group':
      return `/v2/groups/${id}/messages`;
    case 'user':
      return `/v2/users/${id}/messages`;
    case 'channel':
      return `/channels/${id}/messages`;
    default:
      throw new HostError(
        'message.target.invalid',
        `the qqbot provider does not send to ${target.type} targets (guild direct messages are not supported); use a group, user or channel target`,
      );
  }
}

/**
 * The request body for `target`: the renderer's body, plus msg_id and msg_seq
 * for a passive reply. Channel messages take `content` and `msg_id` only.
 */
export function requestBody(target: Target, body: ProviderBody, replyTo: ReplyContext | undefined): Record<string, unknown> {
  if (target.type === 'channel') {
    const b = body as unknown as QQMessageBody;
    const content = b.msg_type === 2 ? b.markdown.content : b.content;
    return replyTo ? { content, ...replyFields(replyTo, false) } : { content };
  }
  return replyTo ? { ...body, ...replyFields(replyTo, true) } : { ...body };
}

/**
 * The QQ Bot provider: sends rendered bodies through the OpenAPI of one
 * account: a reply through the account that received the event, a
 * `messages.send` through the account the host resolved into
 * `target.botAccountId` (docs/protocol/v2.md 4.7). What the platform allows
 * decides (send.md of tencent-connect/bot-docs):
 * - a group or C2C message must answer a received message: active messages
 *   ended on 2025-04-21, so one without a reply context is refused here
 *   (message.provider.active_unavailable) instead of costing a call;
 * - a received group or C2C message takes 5 replies across all plugins
 *   (ReplyBudget); the sixth is refused here (message.reference.reply_limit);
 * - Markdown goes out as Markdown only for an account whose operator says the
 *   platform granted it (`markdown: true`); otherwise, or when the platform
 *   refuses it, the same parts go out as text, and the result says so.
 */
export class QqBotProvider implements MessageProvider {
  readonly id = 'qqbot';
  readonly renderer = 'qqbot';
  readonly budget: ReplyBudget;
  readonly media: MediaCache;
  private readonly windows: ReplyWindows;
  private readonly uploads: MediaStore | undefined;

  constructor(
    private readonly accounts: QqBotAccounts,
    o: QqBotProviderOptions = {},
  ) {
    this.budget = new ReplyBudget(o.budget);
    this.windows = o.replyWindows ?? DEFAULT_REPLY_WINDOWS;
    this.media = o.media ?? new MediaCache();
    this.uploads = o.uploads;
  }

  botAccountIds(): readonly string[] {
    return this.accounts.ids();
  }

  async send(
    target: Target,
    body: ProviderBody,
    replyTo?: ReplyContext,
    message?: Pick<OutgoingMessage, 'format' | 'parts' | 'keyboard'>,
  ): Promise<ProviderSendResult> {
    const account = this.accountFor(target, replyTo);
    if (replyTo && replyTo.messageId === '') {
      throw new HostError(
        'message.reference.unavailable',
        `event ${replyTo.eventId} takes no reply on QQ Bot (the platform gave no message or event id to answer it with)`,
        { provider: 'qqbot', eventId: replyTo.eventId },
      );
    }
    const path = messagePath(target);
    const v2 = target.type === 'group' || target.type === 'user';
    if (v2 && !replyTo) {
      throw new HostError(
        'message.provider.active_unavailable',
        `QQ Bot no longer delivers a message to ${target.type} ${target.id} that answers no received message (active messages ended on 2025-04-21); reply to an event of that chat instead`,
        { provider: 'qqbot', botAccountId: account.id, targetType: target.type },
      );
    }
    let release: (() => void) | undefined;
    if (v2 && replyTo) {
      const window = target.type === 'group' ? this.windows.groupMilliseconds : this.windows.c2cMilliseconds;
      release = this.budget.take(account.id, replyTo.messageId, window, replyTo.sequence);
    }
    let out = body;
    const rendered = body as unknown as QQMessageBody;
    if (rendered.msg_type === 7) {
      // The platform fetches the file once per account and scope; its file_info is reused while it is valid.
      // A plugin's upload goes as its bytes (file_data); its cache key cannot be a URL, which always has a scheme.
      const source = rendered.media;
      try {
        const key = 'url' in source ? source.url : `media:${source.media_id}`;
        const fileInfo = await this.media.fileInfo(account.id, target.type === 'group' ? 'group' : 'user', key, async () =>
          account.client.uploadMedia(
            filesPath(target),
            source.file_type,
            'url' in source ? source.url : { fileData: await this.uploadedBytes(source.media_id), name: `media ${source.media_id}` },
          ),
        );
        out = { msg_type: 7, content: rendered.content, media: { file_info: fileInfo } };
      } catch (e) {
        release?.();
        throw e;
      }
    }
    const asked: 'text' | 'markdown' = rendered.msg_type === 2 ? 'markdown' : 'text';
    let format = asked;
    if (format === 'markdown' && account.config.markdown !== true && message) {
      out = asText(message, target);
      format = 'text';
    }
    try {
      let sent = requestBody(target, out, replyTo);
      let result;
      try {
        result = await account.client.post(path, sent, replyTo !== undefined, replyTo?.sentBefore === true);
      } catch (e) {
        // The platform refused Markdown from this bot: the same parts as text, once.
        if (!(format === 'markdown' && message && isHostError(e) && e.details?.['markdownRefused'] === true)) throw e;
        out = asText(message, target);
        format = 'text';
        sent = requestBody(target, out, replyTo);
        result = await account.client.post(path, sent, replyTo !== undefined, replyTo?.sentBefore === true);
      }
      // The format is named only when it is not the one asked for: Markdown that went out as text.
      return { messageId: result.id, requestBody: sent, ...(format !== asked ? { format } : {}) };
    } catch (e) {
      // A reply that may have arrived (no answer, a server error) keeps its slot; one the platform refused gives it back.
      if (!(isHostError(e) && e.code === 'message.provider.unavailable')) release?.();
      throw e;
    }
  }

  /** The bytes of a plugin's upload, read from the media store: at most LIMITS.maxMediaUploadBytes. */
  private async uploadedBytes(mediaId: string): Promise<Buffer> {
    if (!this.uploads) throw new HostError('message.media.unknown', `media id ${mediaId} is unknown: this host keeps no uploaded media`);
    const chunks: Buffer[] = [];
    for await (const chunk of this.uploads.open(mediaId)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  private accountFor(target: Target, replyTo: ReplyContext | undefined): QqBotAccount {
    const id = replyTo?.botAccountId ?? target.botAccountId;
    const account = id === undefined ? undefined : this.accounts.get(id);
    if (account) return account;
    // The host resolves the account before it calls send; it can still be removed in between.
    throw new HostError(
      'message.target.bot_unknown',
      id === undefined
        ? 'a QQ Bot message must name the bot account that sends it'
        : replyTo
          ? `QQ Bot account "${id}" that received event ${replyTo.eventId} is no longer configured`
          : `QQ Bot account "${id}" is not configured`,
      { botAccountId: id ?? null },
    );
  }
}

/** The same parts rendered as text: mentions stay mentions (the at-user tag works in text), Markdown syntax shows as typed. */
function asText(message: Pick<OutgoingMessage, 'format' | 'parts' | 'keyboard'>, target: Target): ProviderBody {
  // Buttons need Markdown: the text form goes without them.
  const { keyboard: _dropped, ...rest } = message;
  const rendered = renderParsedMessage('qqbot', { ...rest, format: 'text' }, target);
  if (!rendered.ok) throw new HostError(rendered.error.code, rendered.error.message, { provider: 'qqbot' });
  return rendered.value;
}
