import { z } from 'zod';

/** The platform's production endpoints; an account may name others (a sandbox, a proxy, a local fake). */
export const QQBOT_DEFAULT_API_BASE_URL = 'https://api.sgroup.qq.com';
export const QQBOT_DEFAULT_TOKEN_URL = 'https://bots.qq.com/app/getAppAccessToken';

/** An account id: part of the webhook URL. */
export const QQBOT_ACCOUNT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

const HttpUrl = z.url({ protocol: /^https?$/, message: 'must be an http or https URL' });

/**
 * One bot account, as the accounts file lists it and POST /qqbot/accounts
 * takes it. The secret is write-only: no answer ever contains it.
 */
export const QqBotAccountInputSchema = z.strictObject({
  id: z
    .string()
    .regex(QQBOT_ACCOUNT_ID_PATTERN, { message: 'must be 1 to 64 lowercase letters, digits, _ or -, starting with a letter or digit' })
    .describe('The host name of the account; the webhook URL ends with it.'),
  appId: z
    .string()
    .regex(/^[0-9A-Za-z_-]{1,64}$/, { message: 'must be the AppID the platform shows (letters, digits, _ or -)' })
    .describe('The AppID of the bot (the platform shows it in the bot settings).'),
  secret: z
    .string()
    .min(8, { message: 'must be the AppSecret the platform shows (at least 8 characters)' })
    .max(256)
    .regex(/^\S+$/, { message: 'must not contain spaces' })
    .describe('The AppSecret of the bot. Write-only: never shown again.'),
  displayName: z.string().min(1).max(64).optional(),
  apiBaseUrl: HttpUrl.optional().describe(`OpenAPI base URL (default ${QQBOT_DEFAULT_API_BASE_URL}).`),
  tokenUrl: HttpUrl.optional().describe(`Access token endpoint (default ${QQBOT_DEFAULT_TOKEN_URL}).`),
  markdown: z
    .boolean()
    .optional()
    .describe(
      'true once the platform granted this bot Markdown messages (an application on q.qq.com); default false: Markdown replies go out as text with their mentions.',
    ),
});
export type QqBotAccountInput = z.infer<typeof QqBotAccountInputSchema>;

/** What the host remembers of the last webhook request of an account. */
export const QqBotLastEventSchema = z.object({
  at: z.string(),
  op: z.number().int().nullable(),
  type: z.string().nullable().describe('The platform event type (t), e.g. GROUP_AT_MESSAGE_CREATE; null for validation.'),
  platformEventId: z.string().nullable(),
  outcome: z
    .enum(['validated', 'dispatched', 'deferred', 'unsupported', 'refused'])
    .describe(
      'validated: op 13 answered; dispatched: became a message.created event; deferred: not taken, the host was at its bound of waiting events ({"op": 12, "d": 1} asks the platform to push it again); unsupported: logged and acknowledged; refused: answered with an error.',
    ),
  eventId: z.string().nullable().describe('The host event id when dispatched.'),
  error: z.string().nullable().describe('The error code when refused.'),
});
export type QqBotLastEvent = z.infer<typeof QqBotLastEventSchema>;

export const QqBotAccountViewSchema = z.object({
  id: z.string(),
  appId: z.string(),
  displayName: z.string().nullable(),
  source: z.enum(['file', 'api']).describe('file: from HOST_QQBOT_ACCOUNTS_FILE (read-only here); api: added with POST /qqbot/accounts.'),
  apiBaseUrl: z.string(),
  tokenUrl: z.string(),
  markdown: z.boolean().describe('Whether Markdown replies go out as Markdown (the operator says the platform granted it) or as text.'),
  webhookPath: z.string().describe('Path of the webhook under this host.'),
  webhookUrl: z
    .string()
    .describe('The callback URL to register on the platform: HOST_PUBLIC_URL (or the address of this request) and webhookPath.'),
  lastEvent: QqBotLastEventSchema.nullable(),
  counters: z.object({
    received: z.number().int(),
    dispatched: z.number().int(),
    deferred: z
      .number()
      .int()
      .describe('Events not taken because the host was at its bound of waiting events; the platform pushes them again.'),
    refused: z.number().int(),
    unsupported: z.number().int(),
  }),
});
export type QqBotAccountView = z.infer<typeof QqBotAccountViewSchema>;

export const QqBotAccountListResponseSchema = z.object({ accounts: z.array(QqBotAccountViewSchema) });
export type QqBotAccountListResponse = z.infer<typeof QqBotAccountListResponseSchema>;

export const QqBotAccountResponseSchema = z.object({ account: QqBotAccountViewSchema });

export const QqBotAccountDeletedSchema = z.object({ removed: z.literal(true), id: z.string() });

/** The answer to a callback-URL validation (op 13). */
export const QqBotValidationResponseSchema = z.object({ plain_token: z.string(), signature: z.string() });
/** The answer to a dispatch (op 0): HTTP Callback ACK. */
export const QqBotAckResponseSchema = z.object({ op: z.literal(12) });
