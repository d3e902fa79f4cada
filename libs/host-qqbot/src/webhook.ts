import type { QqBotLastEvent } from '@host/admin-api';
import { HostError } from '@host/host-core';
import type { QqBotErrorCode } from '@host/host-errors';
import { EVENT_JSON_SHAPE_LIMITS, parseJsonWithin, type MessageEvent } from '@host/protocol';
import type { QqBotAccount, QqBotAccounts } from './accounts';
import { DEFAULT_REPLY_WINDOWS, mapDispatch, SUPPORTED_EVENT_TYPES, type ReplyWindows } from './event-mapping';
import { replayKeys } from './replay-guard';
import { validationSignature, verifyWebhook } from './signing';

export interface QqBotWebhookOptions {
  accounts: QqBotAccounts;
  /**
   * Offers a mapped event to the dispatcher, which decides at once whether it
   * takes it (admission) and then routes it; the webhook does not wait for
   * the routing. A refused event is answered so the platform pushes it again.
   */
  /**
   * Offers a mapped event to the host: refused, or taken with `durable` (settles once the host keeps the event
   * where a crash does not lose it; the platform is told "received" only after it) and `routed`.
   */
  accept: (
    event: MessageEvent,
  ) => { accepted: true; durable: Promise<void>; routed: Promise<unknown> } | { accepted: false; reason: string };
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** Largest timestamp difference to the host clock accepted (default 300 s). */
  timestampToleranceSeconds?: number;
  /** Passive-reply windows (default: the platform's, 5 min in groups and channels, 60 min in c2c). */
  replyWindows?: ReplyWindows;
  /** Refusal log lines per account and minute; further ones are counted and summarised (default 20). */
  maxRefusalLogsPerMinute?: number;
  now?: () => number;
}

/** What the webhook answers. */
export interface WebhookAnswer {
  status: number;
  body: unknown;
}

/** The HTTP Callback ACK (op 12), one object for every answer that is one, and its bytes. */
export const ACK_BODY: { readonly op: 12 } = Object.freeze({ op: 12 });
export const ACK_TEXT = Buffer.from(JSON.stringify(ACK_BODY));
/**
 * The op 12 answer to a dispatch the bot did not take: `d` 1 asks the
 * platform to push the event again (the platform's Go SDK answers a failed
 * dispatch so: `GenDispatchACK(false)` in tencent-connect/botgo,
 * interaction/webhook/webhook.go, "the server will retry").
 */
export const RETRY_ACK_BODY: { readonly op: 12; readonly d: 1 } = Object.freeze({ op: 12, d: 1 });

/** `plain_token` of a validation request: the platform's are short alphanumeric strings. */
const PLAIN_TOKEN = /^[A-Za-z0-9_-]{1,128}$/;
const EVENT_TS = /^\d{1,20}$/;
const TIMESTAMP = /^\d{1,20}$/;

/**
 * The webhook of every QQ Bot account. Order of checks, each refusal logged:
 * 1. A request that carries signature headers is verified before its body is
 *    even parsed: Ed25519 over X-Signature-Timestamp + raw body with the
 *    account's public key (401), then the timestamp tolerance (401).
 * 2. An unsigned request is taken only as a callback-URL validation (op 13);
 *    anything else unsigned is 401. Its plain_token must be a short token
 *    without braces: the answer is a signature with the bot's key over
 *    event_ts + plain_token, and an unrestricted token would let anyone obtain
 *    a valid webhook signature (timestamp + a JSON body) for a forged event.
 * 3. op 0: a request whose event id, or whose message's id (`d.id`), was
 *    taken before is acknowledged (200, op 12) without dispatch, also after a restart (the account's
 *    replay memory is in the host's store); one with neither is named by its
 *    signature. A message event becomes a `message.created` event, offered to
 *    the dispatcher: taken, it is routed without waiting and the platform gets
 *    `{op: 12}` at once, whatever plugins do; refused at admission (the
 *    host's backlog is full), the platform gets `{op: 12, d: 1}` and pushes it
 *    again later, and its ids are forgotten so that push is no replay. Other
 *    event types are logged as unsupported and acknowledged with `{op: 12}`.
 */
export class QqBotWebhook {
  private readonly now: () => number;
  private readonly toleranceMs: number;
  private readonly windows: ReplyWindows;
  private readonly logBudget = new Map<string, { windowStart: number; logged: number; suppressed: number }>();

  constructor(private readonly o: QqBotWebhookOptions) {
    this.now = o.now ?? Date.now;
    this.toleranceMs = (o.timestampToleranceSeconds ?? 300) * 1000;
    this.windows = o.replyWindows ?? DEFAULT_REPLY_WINDOWS;
  }

  /** Answers one webhook request; throws a HostError (QQBOT_*) for a refusal. */
  async handle(
    accountId: string,
    headers: Record<string, string | string[] | undefined>,
    body: Buffer,
    remote = 'unknown',
  ): Promise<WebhookAnswer> {
    const account = this.o.accounts.get(accountId);
    if (!account) throw new HostError('QQBOT_ACCOUNT_NOT_FOUND', `No QQ Bot account "${accountId}" takes webhooks here.`);
    account.counters.received++;
    const signature = header(headers, 'x-signature-ed25519');
    const timestamp = header(headers, 'x-signature-timestamp');
    const signed = signature !== undefined || timestamp !== undefined;
    if (signed) {
      if (signature === undefined || timestamp === undefined || !TIMESTAMP.test(timestamp)) {
        throw this.refuse(
          account,
          remote,
          'QQBOT_SIGNATURE_INVALID',
          'X-Signature-Ed25519 or X-Signature-Timestamp is missing or malformed',
        );
      }
      if (!verifyWebhook(account.publicKey, timestamp, body, signature)) {
        throw this.refuse(account, remote, 'QQBOT_SIGNATURE_INVALID', 'the Ed25519 signature does not match this account');
      }
      const skew = Math.abs(this.now() - Number(timestamp) * 1000);
      if (skew > this.toleranceMs) {
        throw this.refuse(
          account,
          remote,
          'QQBOT_TIMESTAMP_STALE',
          `X-Signature-Timestamp ${timestamp} is ${Math.round(skew / 1000)} s from the host clock (tolerance ${this.toleranceMs / 1000} s)`,
        );
      }
    }
    // Checked on the raw text before parsing: a body nested thousands deep parses, then overflows the stack of
    // every reader after this one (the event log, plugins).
    const parsed = parseJsonWithin(body.toString('utf8'), EVENT_JSON_SHAPE_LIMITS);
    if (!parsed.ok && parsed.reason === 'shape') {
      throw this.refuse(account, remote, 'QQBOT_PAYLOAD_TOO_COMPLEX', `the body is refused: ${parsed.message}`);
    }
    if (!parsed.ok) {
      throw this.refuse(account, remote, signed ? 'QQBOT_PAYLOAD_INVALID' : 'QQBOT_SIGNATURE_INVALID', 'the body is not JSON');
    }
    const payload = parsed.value as { op?: unknown; d?: unknown; t?: unknown; id?: unknown } | null;
    if (!payload || typeof payload !== 'object' || typeof payload.op !== 'number') {
      throw this.refuse(account, remote, signed ? 'QQBOT_PAYLOAD_INVALID' : 'QQBOT_SIGNATURE_INVALID', 'the body has no numeric op');
    }
    if (payload.op === 13) return this.validate(account, payload.d, remote, signed);
    if (!signed) throw this.refuse(account, remote, 'QQBOT_SIGNATURE_INVALID', `an op ${payload.op} request without signature headers`);
    const platformEventId = typeof payload.id === 'string' && payload.id !== '' ? payload.id : null;
    const type = typeof payload.t === 'string' ? payload.t : null;
    if (payload.op !== 0) {
      this.note(account, { op: payload.op, type, platformEventId, outcome: 'unsupported', eventId: null, error: null });
      account.counters.unsupported++;
      this.o.log('info', `qqbot ${account.id}: op ${payload.op} is not handled by a webhook; acknowledged`);
      return { status: 200, body: ACK_BODY };
    }
    const messageId = isMessageEvent(type) ? stringField(payload.d, 'id') : null;
    const keys = replayKeys({ eventId: platformEventId, messageId, signature: signature! });
    if (!(await account.replays.firstTime(keys))) {
      // Acknowledged, not dispatched: the platform pushes an event again until it gets a 200 (its Go SDK answers
      // every handled dispatch with op 12, tencent-connect/botgo interaction/webhook/webhook.go), so an error would
      // only bring the same push back. A replay by someone else gains nothing from the answer either.
      this.refuse(
        account,
        remote,
        'QQBOT_EVENT_REPLAYED',
        `event ${platformEventId ?? '(no id)'}${messageId ? ` (message ${messageId})` : ''} was already received; acknowledged without dispatch`,
        { op: 0, type, platformEventId },
      );
      return { status: 200, body: ACK_BODY };
    }
    const mapped = mapDispatch(
      payload,
      {
        botAccountId: account.id,
        appId: account.config.appId,
        displayName: account.config.displayName,
        markdownAllowed: account.config.markdown === true,
      },
      this.now(),
      this.windows,
    );
    if (!mapped.ok) {
      account.counters.unsupported++;
      this.note(account, { op: 0, type, platformEventId, outcome: 'unsupported', eventId: null, error: null });
      this.o.log('info', `qqbot ${account.id}: ${mapped.reason}; acknowledged without dispatch`);
      return { status: 200, body: ACK_BODY };
    }
    const event = mapped.event;
    const taken = this.o.accept(event);
    // Told "received" only once the event is kept: a store that cannot keep it makes the platform push it again.
    const kept = taken.accepted
      ? await taken.durable.then(
          () => null,
          (e: unknown) => (e instanceof Error ? e.message : String(e)),
        )
      : null;
    if (taken.accepted && kept !== null) taken.routed.catch(() => undefined);
    if (!taken.accepted || kept !== null) {
      // Not taken, so not seen: the platform's next push of this event is dispatched.
      await account.replays.forget(keys).catch((e: unknown) => {
        this.o.log(
          'error',
          `qqbot ${account.id}: event ${platformEventId ?? '(no id)'} was not taken, but its replay memory could not be cleared, so the platform's next push of it will be refused: ${e instanceof Error ? e.message : String(e)}`,
        );
      });
      account.counters.deferred++;
      const code = taken.accepted ? 'STORE_UNAVAILABLE' : 'EVENTS_OVERLOADED';
      if (kept !== null)
        this.o.log(
          'warn',
          `qqbot ${account.id}: event ${platformEventId ?? '(no id)'} could not be kept (${kept}); the platform is asked to push it again`,
        );
      this.note(account, { op: 0, type, platformEventId, outcome: 'deferred', eventId: null, error: code });
      return { status: 200, body: RETRY_ACK_BODY };
    }
    account.counters.dispatched++;
    this.note(account, { op: 0, type, platformEventId, outcome: 'dispatched', eventId: event.eventId, error: null });
    // A button click spins in the user's client until the platform hears back: acknowledged now, whatever the
    // plugins do with the event (msg-btn.md of tencent-connect/bot-docs, "回应").
    if (mapped.interactionId !== undefined) this.acknowledgeInteraction(account, mapped.interactionId);
    // The platform waits at most 3 s for the answer: routing and plugins run behind it.
    taken.routed.catch((e: unknown) => {
      this.o.log(
        'error',
        `qqbot ${account.id}: event ${event.eventId} could not be dispatched: ${e instanceof Error ? e.message : String(e)}`,
      );
    });
    return { status: 200, body: ACK_BODY };
  }

  private acknowledgeInteraction(account: QqBotAccount, interactionId: string): void {
    account.client.acknowledgeInteraction(interactionId).then(
      () => account.interactionAcks.sent++,
      (e: unknown) => {
        account.interactionAcks.failed++;
        this.logLimited(
          account.id,
          'warn',
          `qqbot ${account.id}: could not acknowledge interaction ${interactionId} to the platform: ${e instanceof Error ? e.message : String(e)}`,
        );
      },
    );
  }

  private validate(account: QqBotAccount, d: unknown, remote: string, verified: boolean): WebhookAnswer {
    const data = (d && typeof d === 'object' ? d : {}) as { plain_token?: unknown; event_ts?: unknown };
    const plainToken = data.plain_token;
    const eventTs = typeof data.event_ts === 'number' ? String(data.event_ts) : data.event_ts;
    if (typeof plainToken !== 'string' || !PLAIN_TOKEN.test(plainToken) || typeof eventTs !== 'string' || !EVENT_TS.test(eventTs)) {
      throw this.refuse(
        account,
        remote,
        'QQBOT_PAYLOAD_INVALID',
        'op 13 needs d.plain_token (1 to 128 letters, digits, _ or -) and d.event_ts (digits)',
        { op: 13, type: null, platformEventId: null },
      );
    }
    // Anyone can send an unsigned validation request: only one whose signature was verified says the platform reached the account.
    if (verified) this.note(account, { op: 13, type: null, platformEventId: null, outcome: 'validated', eventId: null, error: null });
    // Within the same budget as refusals: anyone can post a validation request.
    this.logLimited(account.id, 'info', `qqbot ${account.id}: callback URL validation answered`);
    return { status: 200, body: { plain_token: plainToken, signature: validationSignature(account.privateKey, eventTs, plainToken) } };
  }

  private refuse(
    account: QqBotAccount,
    remote: string,
    code: QqBotErrorCode,
    why: string,
    seen: Pick<QqBotLastEvent, 'op' | 'type' | 'platformEventId'> = { op: null, type: null, platformEventId: null },
  ): HostError {
    account.counters.refused++;
    this.note(account, { ...seen, outcome: 'refused', eventId: null, error: code });
    this.logLimited(account.id, 'warn', `qqbot ${account.id}: refused a webhook request from ${remote} (${code}): ${why}`);
    return new HostError(code, `${why}.`);
  }

  private note(account: QqBotAccount, e: Omit<QqBotLastEvent, 'at'>): void {
    account.lastEvent = { at: new Date(this.now()).toISOString(), ...e };
  }

  /**
   * Logs a line about a request anyone can send (a refusal, a validation), at most
   * `maxRefusalLogsPerMinute` per account and minute, so a flood cannot fill the log.
   */
  private logLimited(accountId: string, level: 'info' | 'warn', line: string): void {
    const now = this.now();
    const max = this.o.maxRefusalLogsPerMinute ?? 20;
    let b = this.logBudget.get(accountId);
    if (!b || now - b.windowStart >= 60_000) {
      if (b && b.suppressed > 0)
        this.o.log('warn', `qqbot ${accountId}: ${b.suppressed} more refused or validation requests were not logged`);
      b = { windowStart: now, logged: 0, suppressed: 0 };
      this.logBudget.set(accountId, b);
    }
    if (b.logged < max) {
      b.logged++;
      this.o.log(level, line);
    } else {
      b.suppressed++;
    }
  }
}

function isMessageEvent(type: string | null): boolean {
  return (SUPPORTED_EVENT_TYPES as readonly (string | null)[]).includes(type);
}

function stringField(d: unknown, name: string): string | null {
  const v = d && typeof d === 'object' ? (d as Record<string, unknown>)[name] : undefined;
  return typeof v === 'string' && v !== '' ? v : null;
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}
