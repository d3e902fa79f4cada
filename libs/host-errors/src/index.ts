import { ERROR_CATALOG, type ErrorCode, type ErrorInfo } from '@host/protocol';
import { API_ERRORS } from './admin-api';
import { INSTALL_ERRORS } from './install';
import { QQBOT_ERRORS } from './qqbot';
import { REGISTRATION_ERRORS } from './registration';
import { REQUEST_FIELD_ERRORS } from './requests';
import { RUNTIME_ERRORS } from './runtime';

export { API_ERRORS, INSTALL_ERRORS, QQBOT_ERRORS, REGISTRATION_ERRORS, REQUEST_FIELD_ERRORS, RUNTIME_ERRORS };
export { HOST_VALIDATION_DOMAINS, type HostValidationDomain } from './requests';
export { HOST_BLOCKS, hostDocBlocks, hostErrorGroups } from './docs';

/**
 * The host's own error families by name, in the order the spec lists them (docs/protocol/v2.md
 * section 11.3, after the wire families): codes a plugin never receives. They are answered by the admin
 * API, the QQ Bot webhook, or recorded as a plugin's state reason; no SDK's catalogue has them.
 */
export const HOST_ERROR_FAMILIES = {
  RUNTIME_ERRORS,
  INSTALL_ERRORS,
  REGISTRATION_ERRORS,
  API_ERRORS,
  REQUEST_FIELD_ERRORS,
  QQBOT_ERRORS,
} as const;

/** Every code of the host's own families, with its entry. */
export const HOST_ONLY_ERRORS = {
  ...RUNTIME_ERRORS,
  ...INSTALL_ERRORS,
  ...REGISTRATION_ERRORS,
  ...API_ERRORS,
  ...REQUEST_FIELD_ERRORS,
  ...QQBOT_ERRORS,
} as const;

/**
 * Every code the host answers or records: the protocol's wire catalogue and the host's own families. A
 * host error (HostError of @host/host-core) carries one of these, with the status and message of its entry.
 */
export const HOST_ERROR_CATALOG = { ...ERROR_CATALOG, ...HOST_ONLY_ERRORS } as const;

export type HostOnlyErrorCode = keyof typeof HOST_ONLY_ERRORS;
/** A code of HOST_ERROR_CATALOG: a wire code or one of the host's own. */
export type HostErrorCode = ErrorCode | HostOnlyErrorCode;
export type RuntimeErrorCode = keyof typeof RUNTIME_ERRORS;
export type InstallErrorCode = keyof typeof INSTALL_ERRORS;
export type RegistrationErrorCode = keyof typeof REGISTRATION_ERRORS;
export type ApiErrorCode = keyof typeof API_ERRORS;
export type RequestFieldErrorCode = keyof typeof REQUEST_FIELD_ERRORS;
export type QqBotErrorCode = keyof typeof QQBOT_ERRORS;

export function hostErrorInfo(code: HostErrorCode): ErrorInfo {
  return HOST_ERROR_CATALOG[code];
}

/** True for a code of HOST_ERROR_CATALOG (for codes read from data: an answer body, an event log record). */
export function isHostErrorCode(code: unknown): code is HostErrorCode {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(HOST_ERROR_CATALOG, code);
}
