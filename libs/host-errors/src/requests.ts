import { defineErrors, fieldIssueFamily } from '@host/protocol';

/**
 * The host's own validated request bodies, by domain: their field issues get the codes
 * `<domain>.field.required`, `<domain>.field.invalid` and `<domain>.field.unknown`, worded as the wire's
 * (@host/protocol's VALIDATION_DOMAINS), but only the admin API and the console provider's API answer them:
 * no plugin receives them and no SDK produces them.
 */
export const HOST_VALIDATION_DOMAINS = {
  request: 'an admin API request body',
  console: 'a console message request',
} as const;

export type HostValidationDomain = keyof typeof HOST_VALIDATION_DOMAINS;

/** Field issues of the admin API's and the console API's request bodies (in `details.issues` of a BAD_REQUEST). */
export const REQUEST_FIELD_ERRORS = defineErrors(fieldIssueFamily(HOST_VALIDATION_DOMAINS));
