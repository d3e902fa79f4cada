export { seedFromSecret, keysFromSecret, signHex, validationSignature, verifyWebhook, type BotKeys } from './signing';
export { ReplayGuard, replayKeys, type ReplayGuardOptions, type ReplayNames } from './replay-guard';
export {
  mapDispatch,
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
export { QqBotProvider, messagePath, requestBody } from './provider';
export { QqBotWebhook, ACK_BODY, ACK_TEXT, type QqBotWebhookOptions, type WebhookAnswer } from './webhook';
export { qqbotRoutes, accountView, webhookPath, readRawBody, DEFAULT_MAX_WEBHOOK_BYTES, type QqBotRoutesOptions } from './routes';
