export { seedFromSecret, keysFromSecret, signHex, validationSignature, verifyWebhook, type BotKeys } from './signing';
export { ReplayGuard, replayKeys, type ReplayGuardOptions, type ReplayNames } from './replay-guard';
export {
  mapDispatch,
  unescapeGuildContent,
  stripOwnMention,
  SUPPORTED_EVENT_TYPES,
  DEFAULT_REPLY_WINDOWS,
  type ReplyWindows,
  type BotIdentity,
  type MappingResult,
  type SupportedEventType,
} from './event-mapping';
export { QqBotApiClient, retryAfterMilliseconds, type QqBotApiClientOptions, type PostResult } from './openapi-client';
export {
  RATE_LIMIT_PLATFORM_CODES,
  TOKEN_PLATFORM_CODES,
  RETRY_ONCE_PLATFORM_CODES,
  ACCOUNT_PLATFORM_CODES,
  REPLY_EXPIRED_PLATFORM_CODES,
  ACCEPTED_FOR_REVIEW_PLATFORM_CODES,
  REPLY_REFUSED_PLATFORM_CODES,
  REPLY_LIMIT_PLATFORM_CODES,
  ACTIVE_UNAVAILABLE_PLATFORM_CODES,
  DUPLICATE_PLATFORM_CODES,
  MARKDOWN_REFUSED_PLATFORM_CODES,
  parsePlatformError,
  type PlatformCode,
  type PlatformErrorBody,
} from './platform-errors';
export {
  QqBotAccount,
  QqBotAccounts,
  readAccountsFile,
  type AccountSource,
  type QqBotAccountsOptions,
  type SecretSealer,
} from './accounts';
export { QqBotProvider, filesPath, messagePath, requestBody, type QqBotProviderOptions } from './provider';
export { MediaCache } from './media-cache';
export { ReplyBudget, MAX_REPLIES_PER_MESSAGE, type ReplyBudgetOptions } from './reply-budget';
export { QqBotWebhook, ACK_BODY, ACK_TEXT, type QqBotWebhookOptions, type WebhookAnswer } from './webhook';
export { qqbotRoutes, accountView, webhookPath, readRawBody, DEFAULT_MAX_WEBHOOK_BYTES, type QqBotRoutesOptions } from './routes';
