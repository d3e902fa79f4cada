import { randomUUID } from 'node:crypto';
import { routableEvent } from '@host/host-core';
import { attachmentKind, type ChatEvent, type MessageEvent, type MessageReference, type UserRef } from '@host/protocol';
import { z } from 'zod';

/** The platform's event types that become `message.created` events. */
export const SUPPORTED_EVENT_TYPES = ['GROUP_AT_MESSAGE_CREATE', 'C2C_MESSAGE_CREATE', 'AT_MESSAGE_CREATE'] as const;
export type SupportedEventType = (typeof SUPPORTED_EVENT_TYPES)[number];

/**
 * The platform's events that become the other event types (tencent-connect/bot-docs: INTERACTION_CREATE in
 * message/trans/msg-btn.md; GROUP_ADD_ROBOT, GROUP_DEL_ROBOT, GROUP_MSG_RECEIVE in group/manage/event.md;
 * FRIEND_ADD, FRIEND_DEL, C2C_MSG_RECEIVE in user/manage/event.md).
 */
export const CHAT_EVENT_TYPES = {
  INTERACTION_CREATE: 'interaction.created',
  GROUP_ADD_ROBOT: 'bot.added',
  FRIEND_ADD: 'bot.added',
  GROUP_DEL_ROBOT: 'bot.removed',
  FRIEND_DEL: 'bot.removed',
  GROUP_MSG_RECEIVE: 'conversation.opened',
  C2C_MSG_RECEIVE: 'conversation.opened',
} as const satisfies Record<string, ChatEvent['eventType']>;

/**
 * The platform's events a bot may answer with their event id (`event_id` of the send APIs, send.md of
 * tencent-connect/bot-docs): INTERACTION_CREATE, C2C_MSG_RECEIVE and FRIEND_ADD in one-to-one chats,
 * INTERACTION_CREATE, GROUP_ADD_ROBOT and GROUP_MSG_RECEIVE in groups.
 */
const ANSWERABLE = new Set(['INTERACTION_CREATE', 'C2C_MSG_RECEIVE', 'FRIEND_ADD', 'GROUP_ADD_ROBOT', 'GROUP_MSG_RECEIVE']);

/** What `messageReference.messageId` holds for an event answered by its event id: this, then the id. */
export const EVENT_ANCHOR_PREFIX = 'event:';

/** Passive-reply windows of the platform, from when the user's message was sent. */
export interface ReplyWindows {
  groupMilliseconds: number;
  c2cMilliseconds: number;
  channelMilliseconds: number;
}

export const DEFAULT_REPLY_WINDOWS: ReplyWindows = {
  groupMilliseconds: 5 * 60_000,
  c2cMilliseconds: 60 * 60_000,
  channelMilliseconds: 5 * 60_000,
};

/**
 * What the platform allows in a reply to each kind of chat, listed in
 * `messageReference.restrictions` (sources: tencent-connect/bot-docs,
 * docs/develop/api-v2/server-inter/message/send-receive/send.md for the
 * windows, the 5 replies and the end of active messages on 2025-04-21;
 * .../trans/text-chain.md for where the at-user and at-everyone tags work).
 * Markdown is a group feature of the protocol (v2.md 7.3), and in a group it
 * also needs the platform's permission, which the operator states per account.
 */
function restrictions(kind: 'group' | 'c2c' | 'channel', markdownAllowed: boolean): string[] {
  switch (kind) {
    case 'group':
      return [
        'qqbot.passive_reply.window_seconds=300',
        'qqbot.passive_reply.max_replies=5',
        markdownAllowed ? 'qqbot.markdown=allowed' : 'qqbot.markdown=not_permitted',
        'qqbot.mention.user=allowed',
        'qqbot.mention.everyone=unsupported',
        'qqbot.active_message=unavailable',
      ];
    case 'c2c':
      return [
        'qqbot.passive_reply.window_seconds=3600',
        'qqbot.passive_reply.max_replies=5',
        'qqbot.markdown=group_only',
        'qqbot.mention=unsupported',
        'qqbot.active_message=unavailable',
      ];
    case 'channel':
      return [
        'qqbot.passive_reply.window_seconds=300',
        'qqbot.markdown=group_only',
        'qqbot.mention.user=allowed',
        'qqbot.mention.everyone=allowed',
      ];
  }
}

/**
 * Guild message content arrives with `&`, `<`, `>` as entities (message_format.md
 * of tencent-connect/bot-docs, "转义内容": "消息抄送会将源字符转为转义后内容"); undone
 * once, in one pass, so `&amp;lt;` becomes `&lt;`, what the user typed.
 */
export function unescapeGuildContent(content: string): string {
  return content.replace(/&(amp|lt|gt);/g, (_m, name: string) => (name === 'amp' ? '&' : name === 'lt' ? '<' : '>'));
}

/**
 * Removes the bot's own mention (`<@!id>` or `<@id>` of a mention flagged
 * `bot`) from the start of guild content, or else from its end, with the
 * spaces beside it, so a command typed after "@bot" starts the text. A
 * mention elsewhere stays where the user put it.
 */
export function stripOwnMention(content: string, botIds: readonly string[]): string {
  for (const id of botIds) {
    const tag = `(?:<@!?${id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}>)`;
    const start = new RegExp(`^\\s*${tag}\\s*`);
    if (start.test(content)) return content.replace(start, '');
    const end = new RegExp(`\\s*${tag}\\s*$`);
    if (end.test(content)) return content.replace(end, '');
  }
  return content;
}

const Id = z.string().min(1).max(256);

const AttachmentSchema = z.looseObject({
  content_type: z.string().max(256).optional(),
  filename: z.string().max(1024).optional(),
  url: z.string().max(4096).optional(),
  size: z.union([z.number(), z.string()]).optional(),
  width: z.union([z.number(), z.string()]).optional(),
  height: z.union([z.number(), z.string()]).optional(),
});

const InteractionSchema = z.looseObject({
  id: Id,
  timestamp: z.string().optional(),
  chat_type: z.number().optional(),
  scene: z.string().optional(),
  group_openid: z.string().max(256).optional(),
  group_member_openid: z.string().max(256).optional(),
  user_openid: z.string().max(256).optional(),
  guild_id: z.string().max(256).optional(),
  channel_id: z.string().max(256).optional(),
  data: z
    .looseObject({
      resolved: z
        .looseObject({
          button_data: z.string().max(4096).optional(),
          button_id: z.string().max(256).optional(),
          user_id: z.string().max(256).optional(),
          message_id: z.string().max(256).optional(),
        })
        .optional(),
    })
    .optional(),
});

const GroupRobotSchema = z.looseObject({ group_openid: Id, op_member_openid: z.string().max(256).optional(), timestamp: z.unknown() });
const FriendSchema = z.looseObject({ openid: Id, timestamp: z.unknown() });

const GroupMentionSchema = z.looseObject({
  id: z.string().optional(),
  member_openid: z.string().optional(),
  user_openid: z.string().optional(),
  nickname: z.string().optional(),
  username: z.string().optional(),
  is_you: z.boolean().optional(),
  bot: z.boolean().optional(),
});

const GroupAtMessageSchema = z.looseObject({
  id: Id,
  content: z.string().default(''),
  timestamp: z.string().optional(),
  group_openid: Id,
  author: z.looseObject({ member_openid: Id, union_openid: z.string().optional(), id: z.string().optional() }),
  attachments: z.array(AttachmentSchema).max(100).optional(),
  mentions: z.array(GroupMentionSchema).max(100).optional(),
});

const C2cMessageSchema = z.looseObject({
  id: Id,
  content: z.string().default(''),
  timestamp: z.string().optional(),
  author: z.looseObject({ user_openid: Id, union_openid: z.string().optional(), id: z.string().optional() }),
  attachments: z.array(AttachmentSchema).max(100).optional(),
});

const ChannelMessageSchema = z.looseObject({
  id: Id,
  content: z.string().default(''),
  timestamp: z.string().optional(),
  channel_id: Id,
  guild_id: Id,
  author: z.looseObject({ id: Id, username: z.string().optional(), bot: z.boolean().optional() }),
  member: z.looseObject({ nick: z.string().optional() }).optional(),
  attachments: z.array(AttachmentSchema).max(100).optional(),
  mentions: z
    .array(z.looseObject({ id: Id, username: z.string().optional(), bot: z.boolean().optional() }))
    .max(100)
    .optional(),
});

export interface BotIdentity {
  botAccountId: string;
  appId: string;
  displayName?: string;
  /** The operator says the platform granted this bot Markdown (per account; default no). */
  markdownAllowed?: boolean;
}

/**
 * A mapped event: a message event, or another type as the dispatcher routes it (see routableEvent).
 * `interactionId` names a button click the host must acknowledge to the platform.
 */
export type MappingResult = { ok: true; event: MessageEvent; interactionId?: string } | { ok: false; reason: string };

const ZONED_ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/**
 * Turns one op 0 dispatch into a `message.created` event, or says why it
 * cannot (an event type that has no mapping, a payload that lacks what the
 * mapping needs). `payload` is the whole webhook body; it becomes `rawPayload`
 * unchanged.
 */
export function mapDispatch(
  payload: { t?: unknown; d?: unknown },
  bot: BotIdentity,
  receivedAt: number,
  windows: ReplyWindows = DEFAULT_REPLY_WINDOWS,
): MappingResult {
  const type = payload.t;
  if (type === 'GROUP_AT_MESSAGE_CREATE') {
    const d = GroupAtMessageSchema.safeParse(payload.d);
    if (!d.success) return { ok: false, reason: `GROUP_AT_MESSAGE_CREATE without ${firstIssue(d.error)}` };
    const m = d.data;
    const sender: UserRef = {
      provider: 'qqbot',
      mentionId: m.author.member_openid,
      memberOpenId: m.author.member_openid,
      ...(m.author.union_openid ? { unionOpenId: m.author.union_openid } : {}),
    };
    const mentions: UserRef[] = (m.mentions ?? []).flatMap((x) => {
      const id = x.member_openid ?? x.user_openid ?? x.id;
      if (!id || x.is_you) return [];
      const name = x.nickname ?? x.username;
      return [
        {
          provider: 'qqbot',
          mentionId: id,
          ...(x.member_openid ? { memberOpenId: x.member_openid } : {}),
          ...(x.user_openid ? { userOpenId: x.user_openid } : {}),
          ...(name ? { displayName: name } : {}),
        },
      ];
    });
    return build(payload, bot, receivedAt, m.timestamp, windows.groupMilliseconds, {
      conversation: { type: 'group', conversationId: m.group_openid, groupOpenId: m.group_openid },
      sender,
      message: { id: m.id, content: m.content, attachments: attachments(m.id, m.attachments), mentions },
      reference: {
        messageId: m.id,
        targetType: 'group',
        targetId: m.group_openid,
        restrictions: restrictions('group', bot.markdownAllowed === true),
      },
    });
  }
  if (type === 'C2C_MESSAGE_CREATE') {
    const d = C2cMessageSchema.safeParse(payload.d);
    if (!d.success) return { ok: false, reason: `C2C_MESSAGE_CREATE without ${firstIssue(d.error)}` };
    const m = d.data;
    const openid = m.author.user_openid;
    return build(payload, bot, receivedAt, m.timestamp, windows.c2cMilliseconds, {
      conversation: { type: 'c2c', conversationId: openid, c2cOpenId: openid },
      sender: {
        provider: 'qqbot',
        mentionId: openid,
        userOpenId: openid,
        ...(m.author.union_openid ? { unionOpenId: m.author.union_openid } : {}),
      },
      message: { id: m.id, content: m.content, attachments: attachments(m.id, m.attachments), mentions: [] },
      reference: { messageId: m.id, targetType: 'user', targetId: openid, restrictions: restrictions('c2c', false) },
    });
  }
  if (type === 'AT_MESSAGE_CREATE') {
    const d = ChannelMessageSchema.safeParse(payload.d);
    if (!d.success) return { ok: false, reason: `AT_MESSAGE_CREATE without ${firstIssue(d.error)}` };
    const m = d.data;
    const name = m.member?.nick || m.author.username;
    const mentioned = m.mentions ?? [];
    const content = stripOwnMention(
      unescapeGuildContent(m.content),
      mentioned.filter((x) => x.bot).map((x) => x.id),
    );
    return build(payload, bot, receivedAt, m.timestamp, windows.channelMilliseconds, {
      conversation: { type: 'channel', conversationId: m.channel_id, guildId: m.guild_id, channelId: m.channel_id },
      sender: { provider: 'qqbot', mentionId: m.author.id, ...(name ? { displayName: name } : {}) },
      message: {
        id: m.id,
        content,
        attachments: attachments(m.id, m.attachments),
        // The bot's own mention is listed too: it was mentioned, even though its tag left the content.
        mentions: mentioned.map((x) => ({ provider: 'qqbot', mentionId: x.id, ...(x.username ? { displayName: x.username } : {}) })),
      },
      reference: { messageId: m.id, targetType: 'channel', targetId: m.channel_id, restrictions: restrictions('channel', false) },
    });
  }
  if (typeof type === 'string' && Object.prototype.hasOwnProperty.call(CHAT_EVENT_TYPES, type)) {
    return mapChatEvent(type as keyof typeof CHAT_EVENT_TYPES, payload, bot, receivedAt, windows);
  }
  return { ok: false, reason: `event type ${typeof type === 'string' ? type : JSON.stringify(type)} has no mapping` };
}

function botRef(bot: BotIdentity): ChatEvent['bot'] {
  return {
    botAccountId: bot.botAccountId,
    platform: 'qqbot',
    externalBotId: bot.appId,
    ...(bot.displayName ? { displayName: bot.displayName } : {}),
  };
}

/** The platform's seconds since the epoch (a number or a digit string), or an RFC 3339 time, as ISO 8601. */
function platformTime(value: unknown, receivedAt: number): { iso: string; at: number } {
  const seconds = typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,12}$/.test(value) ? Number(value) : NaN;
  if (Number.isFinite(seconds) && seconds > 0) {
    const at = Math.min(seconds * 1000, receivedAt);
    return { iso: new Date(at).toISOString(), at };
  }
  if (typeof value === 'string' && ZONED_ISO.test(value)) return { iso: value, at: Math.min(Date.parse(value), receivedAt) };
  return { iso: new Date(receivedAt).toISOString(), at: receivedAt };
}

function mapChatEvent(
  type: keyof typeof CHAT_EVENT_TYPES,
  payload: { id?: unknown; d?: unknown },
  bot: BotIdentity,
  receivedAt: number,
  windows: ReplyWindows,
): MappingResult {
  const eventType = CHAT_EVENT_TYPES[type];
  const payloadId = typeof payload.id === 'string' && payload.id !== '' ? payload.id : undefined;
  const anchor = (
    id: string | undefined,
    targetType: MessageReference['targetType'],
    targetId: string,
    windowMs: number,
    since: number,
  ): MessageReference | undefined =>
    id === undefined || !ANSWERABLE.has(type)
      ? undefined
      : {
          messageId: `${EVENT_ANCHOR_PREFIX}${id}`,
          targetType,
          targetId,
          replyUntil: new Date(since + windowMs).toISOString(),
          restrictions: ['qqbot.reply_anchor=event_id', `qqbot.passive_reply.window_seconds=${windowMs / 1000}`],
        };
  const common = { eventId: randomUUID(), source: 'qqbot', bot: botRef(bot), rawPayload: payload };
  let event: ChatEvent;
  let interactionId: string | undefined;
  if (type === 'INTERACTION_CREATE') {
    const d = InteractionSchema.safeParse(payload.d);
    if (!d.success) return { ok: false, reason: `INTERACTION_CREATE without ${firstIssue(d.error)}` };
    const i = d.data;
    const time = platformTime(i.timestamp, receivedAt);
    const resolved = i.data?.resolved ?? {};
    const interaction = {
      id: i.id,
      data: resolved.button_data ?? '',
      ...(resolved.button_id ? { buttonId: resolved.button_id } : {}),
      ...(resolved.message_id ? { messageId: resolved.message_id } : {}),
    };
    interactionId = i.id;
    if (i.group_openid) {
      const member = i.group_member_openid ?? resolved.user_id;
      if (!member) return { ok: false, reason: 'INTERACTION_CREATE in a group without group_member_openid' };
      event = {
        ...common,
        eventType,
        timestamp: time.iso,
        conversation: { type: 'group', conversationId: i.group_openid, groupOpenId: i.group_openid },
        sender: { provider: 'qqbot', mentionId: member, memberOpenId: member },
        interaction,
        messageReference: anchor(i.id, 'group', i.group_openid, windows.groupMilliseconds, time.at)!,
      };
    } else if (i.user_openid) {
      event = {
        ...common,
        eventType,
        timestamp: time.iso,
        conversation: { type: 'c2c', conversationId: i.user_openid, c2cOpenId: i.user_openid },
        sender: { provider: 'qqbot', mentionId: i.user_openid, userOpenId: i.user_openid },
        interaction,
        messageReference: anchor(i.id, 'user', i.user_openid, windows.c2cMilliseconds, time.at)!,
      };
    } else if (i.channel_id && i.guild_id && resolved.user_id) {
      event = {
        ...common,
        eventType,
        timestamp: time.iso,
        conversation: { type: 'channel', conversationId: i.channel_id, guildId: i.guild_id, channelId: i.channel_id },
        sender: { provider: 'qqbot', mentionId: resolved.user_id },
        interaction,
        messageReference: anchor(i.id, 'channel', i.channel_id, windows.channelMilliseconds, time.at)!,
      };
    } else {
      return { ok: false, reason: 'INTERACTION_CREATE names no group, user or channel it happened in' };
    }
  } else if (type === 'GROUP_ADD_ROBOT' || type === 'GROUP_DEL_ROBOT' || type === 'GROUP_MSG_RECEIVE') {
    const d = GroupRobotSchema.safeParse(payload.d);
    if (!d.success) return { ok: false, reason: `${type} without ${firstIssue(d.error)}` };
    const g = d.data;
    const time = platformTime(g.timestamp, receivedAt);
    const reference = anchor(payloadId, 'group', g.group_openid, windows.groupMilliseconds, time.at);
    event = {
      ...common,
      eventType,
      timestamp: time.iso,
      conversation: { type: 'group', conversationId: g.group_openid, groupOpenId: g.group_openid },
      ...(g.op_member_openid ? { sender: { provider: 'qqbot', mentionId: g.op_member_openid, memberOpenId: g.op_member_openid } } : {}),
      ...(reference ? { messageReference: reference } : {}),
    };
  } else {
    const d = FriendSchema.safeParse(payload.d);
    if (!d.success) return { ok: false, reason: `${type} without ${firstIssue(d.error)}` };
    const f = d.data;
    const time = platformTime(f.timestamp, receivedAt);
    const reference = anchor(payloadId, 'user', f.openid, windows.c2cMilliseconds, time.at);
    event = {
      ...common,
      eventType,
      timestamp: time.iso,
      conversation: { type: 'c2c', conversationId: f.openid, c2cOpenId: f.openid },
      sender: { provider: 'qqbot', mentionId: f.openid, userOpenId: f.openid },
      ...(reference ? { messageReference: reference } : {}),
    };
  }
  return { ok: true, event: routableEvent(event), ...(interactionId ? { interactionId } : {}) };
}

interface Parts {
  conversation: MessageEvent['conversation'];
  sender: UserRef;
  message: MessageEvent['message'];
  reference: Omit<MessageEvent['messageReference'], 'replyUntil'>;
}

function build(
  payload: unknown,
  bot: BotIdentity,
  receivedAt: number,
  platformTimestamp: string | undefined,
  windowMs: number,
  parts: Parts,
): MappingResult {
  const sentAt = platformTimestamp && ZONED_ISO.test(platformTimestamp) ? Date.parse(platformTimestamp) : NaN;
  // The window runs from when the user sent the message; a clock ahead of ours never lengthens it.
  const start = Number.isNaN(sentAt) ? receivedAt : Math.min(sentAt, receivedAt);
  return {
    ok: true,
    event: {
      eventId: randomUUID(),
      eventType: 'message.created',
      timestamp: Number.isNaN(sentAt) ? new Date(receivedAt).toISOString() : platformTimestamp!,
      source: 'qqbot',
      bot: {
        botAccountId: bot.botAccountId,
        platform: 'qqbot',
        externalBotId: bot.appId,
        ...(bot.displayName ? { displayName: bot.displayName } : {}),
      },
      conversation: parts.conversation,
      sender: parts.sender,
      message: parts.message,
      messageReference: { ...parts.reference, replyUntil: new Date(start + windowMs).toISOString() },
      rawPayload: payload,
    } as MessageEvent,
  };
}

function attachments(messageId: string, list: z.infer<typeof AttachmentSchema>[] | undefined): MessageEvent['message']['attachments'] {
  return (list ?? []).map((a, i) => {
    const size = typeof a.size === 'number' ? a.size : a.size !== undefined ? Number(a.size) : NaN;
    const width = typeof a.width === 'number' ? a.width : a.width !== undefined ? Number(a.width) : NaN;
    const height = typeof a.height === 'number' ? a.height : a.height !== undefined ? Number(a.height) : NaN;
    const contentType = a.content_type ?? 'application/octet-stream';
    const url = a.url ? (/^[a-z][a-z0-9+.-]*:\/\//i.test(a.url) ? a.url : `https://${a.url.replace(/^\/+/, '')}`) : undefined;
    return {
      id: `${messageId}:${i}`,
      contentType,
      kind: attachmentKind(contentType),
      ...(url ? { url } : {}),
      ...(Number.isInteger(size) && size >= 0 ? { sizeBytes: size } : {}),
      ...(a.filename ? { fileName: a.filename } : {}),
      ...(Number.isInteger(width) && width >= 0 ? { width } : {}),
      ...(Number.isInteger(height) && height >= 0 ? { height } : {}),
    };
  });
}

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  return issue ? `a valid d.${issue.path.join('.')} (${issue.message})` : 'a valid d';
}
