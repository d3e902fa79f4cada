import { randomBytes } from 'node:crypto';
import { Agent, request } from 'undici';
import { keysFromSecret, signHex } from '../signing';

export interface SignedPostOptions {
  /** X-Signature-Timestamp in unix seconds (default: now). */
  timestamp?: number;
  /** Replaces the signature (a wrong one, for tests). */
  signature?: string;
  /** Leaves out the signature headers. */
  unsigned?: boolean;
}

export interface WebhookAnswerSeen {
  status: number;
  /** The parsed JSON answer (the text when it is not JSON). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read fields of any answer shape
  body: any;
}

export interface GroupAtMessage {
  groupOpenId: string;
  memberOpenId: string;
  content: string;
  /** The platform's message id (default: a new one). */
  messageId?: string;
  /** Message time, ISO 8601 with a zone (default: now, +08:00 like the platform). */
  timestamp?: string;
  attachments?: { content_type: string; filename?: string; url: string; size?: number }[];
}

export interface C2cMessage {
  userOpenId: string;
  content: string;
  messageId?: string;
  timestamp?: string;
}

export interface ChannelAtMessage {
  channelId: string;
  guildId: string;
  authorId: string;
  authorName?: string;
  /** What the user typed after mentioning the bot; the payload carries it escaped, after the bot's mention. */
  typed: string;
  /** The bot's user id in the guild (its mention is `<@!id>`). */
  botUserId: string;
  messageId?: string;
  timestamp?: string;
}

/** Now as the platform writes it: ISO 8601 in China Standard Time. */
export function platformTime(at = Date.now()): string {
  return new Date(at + 8 * 3600_000).toISOString().replace(/\.\d{3}Z$/, '+08:00');
}

/**
 * Plays the platform's side of the webhook: builds event payloads and posts
 * them with real Ed25519 signatures made from the bot secret, as the
 * platform does (X-Signature-Ed25519 over X-Signature-Timestamp + body).
 */
export class WebhookSigner {
  private readonly privateKey;
  private readonly agent = new Agent({ keepAliveTimeout: 10_000, connections: 64 });
  private seq = 0;

  constructor(private readonly o: { secret: string; appId: string; webhookUrl: string }) {
    this.privateKey = keysFromSecret(o.secret).privateKey;
  }

  /** The signature headers of `body` at `timestamp`. */
  sign(body: string, timestamp = Math.floor(Date.now() / 1000)): Record<string, string> {
    return {
      'x-signature-ed25519': signHex(this.privateKey, `${timestamp}${body}`),
      'x-signature-timestamp': String(timestamp),
      'x-signature-method': 'Ed25519',
      'x-bot-appid': this.o.appId,
      'user-agent': 'QQBot-Callback',
    };
  }

  /** POSTs `payload` (an object, or a raw string body) to the webhook. */
  async post(payload: unknown, options: SignedPostOptions = {}): Promise<WebhookAnswerSeen> {
    const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (!options.unsigned) {
      Object.assign(headers, this.sign(body, options.timestamp));
      if (options.signature !== undefined) headers['x-signature-ed25519'] = options.signature;
    }
    const res = await request(this.o.webhookUrl, { method: 'POST', dispatcher: this.agent, headers, body });
    const text = await res.body.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    return { status: res.statusCode, body: parsed };
  }

  /** The callback-URL validation request (op 13), unsigned like the example. */
  validation(plainToken: string, eventTs: string): Promise<WebhookAnswerSeen> {
    return this.post({ d: { plain_token: plainToken, event_ts: eventTs }, op: 13 }, { unsigned: true });
  }

  /** An op 0 GROUP_AT_MESSAGE_CREATE payload with a fresh event id. */
  groupAtMessage(m: GroupAtMessage): Record<string, unknown> {
    const messageId = m.messageId ?? `ROBOT1.0_${randomBytes(12).toString('hex')}`;
    return {
      op: 0,
      id: `GROUP_AT_MESSAGE_CREATE:${randomBytes(8).toString('hex')}${++this.seq}`,
      t: 'GROUP_AT_MESSAGE_CREATE',
      d: {
        id: messageId,
        content: m.content,
        timestamp: m.timestamp ?? platformTime(),
        group_id: m.groupOpenId,
        group_openid: m.groupOpenId,
        author: { id: m.memberOpenId, member_openid: m.memberOpenId },
        ...(m.attachments ? { attachments: m.attachments } : {}),
      },
    };
  }

  /** An op 0 C2C_MESSAGE_CREATE payload with a fresh event id. */
  c2cMessage(m: C2cMessage): Record<string, unknown> {
    const messageId = m.messageId ?? `ROBOT1.0_${randomBytes(12).toString('hex')}`;
    return {
      op: 0,
      id: `C2C_MESSAGE_CREATE:${randomBytes(8).toString('hex')}${++this.seq}`,
      t: 'C2C_MESSAGE_CREATE',
      d: {
        id: messageId,
        content: m.content,
        timestamp: m.timestamp ?? platformTime(),
        author: { id: m.userOpenId, user_openid: m.userOpenId },
      },
    };
  }

  /**
   * An op 0 AT_MESSAGE_CREATE payload as the platform pushes it: the Message
   * object of tencent-connect/bot-docs (docs/develop/api-v2/server-inter/message/
   * send-receive/event.md), content starting with the bot's own `<@!id>` and
   * escaped (`&`, `<`, `>` as entities: message_format.md, "转义内容"), the bot
   * listed in mentions.
   */
  channelAtMessage(m: ChannelAtMessage): Record<string, unknown> {
    const escaped = m.typed.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
    return {
      op: 0,
      id: `AT_MESSAGE_CREATE:${randomBytes(8).toString('hex')}${++this.seq}`,
      t: 'AT_MESSAGE_CREATE',
      d: {
        author: { avatar: 'http://thirdqq.qlogo.cn/0', bot: false, id: m.authorId, username: m.authorName ?? 'user' },
        channel_id: m.channelId,
        content: `<@!${m.botUserId}> ${escaped}`,
        guild_id: m.guildId,
        id: m.messageId ?? `08${randomBytes(16).toString('hex')}`,
        member: { joined_at: '2021-04-12T16:34:42+08:00', roles: ['1'] },
        mentions: [{ avatar: '', bot: true, id: m.botUserId, username: 'bot' }],
        seq: this.seq,
        timestamp: m.timestamp ?? platformTime(),
      },
    };
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
