import { defineErrors } from '@host/protocol';

/**
 * What the QQ Bot webhook endpoint answers the platform (or anyone else posting
 * to it), and the admin API's answers about QQ Bot accounts.
 */
export const QQBOT_ERRORS = defineErrors({
  QQBOT_SIGNATURE_INVALID: {
    status: 401,
    message:
      'The webhook request has no valid X-Signature-Ed25519 over X-Signature-Timestamp and the body for this bot account. Check that the callback URL belongs to this account and that no proxy rewrites the body.',
    causes:
      "The secret of the account is not the bot's AppSecret, the URL belongs to another account, or a proxy changes the body. Requests not from the platform are refused the same way.",
  },
  QQBOT_TIMESTAMP_STALE: {
    status: 401,
    message: 'X-Signature-Timestamp is too far from the host clock (5 minutes unless configured). Keep the host clock in sync with NTP.',
    causes: "The host's clock is more than 5 minutes off.",
    fix: 'Sync the clock with NTP.',
  },
  QQBOT_EVENT_REPLAYED: {
    status: 409,
    message:
      'An event with this id, or carrying this message id, was already received in the last 65 minutes (before a restart too); the webhook acknowledges it (200, op 12) so the platform stops pushing it, and does not dispatch it again.',
    causes:
      "The platform pushed an event again (it does until it gets a 200), or someone replayed its request, possibly signed anew; it was dispatched the first time. An event with neither id is recognised by its signature. Shown as the account's last event, not as an HTTP error.",
  },
  QQBOT_PAYLOAD_INVALID: {
    status: 400,
    message: 'The webhook body is not a JSON payload with a numeric op (and a valid d for op 13). Only the QQ Bot platform posts here.',
  },
  QQBOT_PAYLOAD_TOO_COMPLEX: {
    status: 400,
    message:
      'The webhook body nests arrays and objects deeper than 32 levels, or one array or object has more than 10,000 entries. The platform sends no such event; the request is refused before it is acknowledged or dispatched.',
    causes: 'Someone holding a validly signed body built to overflow the stack of the readers after the webhook (the event log, plugins).',
  },
  QQBOT_PAYLOAD_TOO_LARGE: {
    status: 413,
    message: 'The webhook body is larger than the host accepts (64 KiB unless configured).',
  },
  QQBOT_ACCOUNT_NOT_FOUND: {
    status: 404,
    message: 'No QQ Bot account with this id. List the accounts with GET /api/qqbot/accounts.',
    causes:
      "The callback URL configured on the platform is not the account's webhookUrl (GET /api/qqbot/accounts), or the account was removed.",
    fix: "Copy the webhookUrl from the admin app's QQ Bot tab; it must be reachable over HTTPS through your proxy. lastEvent of the account shows the last request the host saw.",
  },
  QQBOT_ACCOUNT_EXISTS: {
    status: 409,
    message: 'A QQ Bot account with this id or app id already exists. Choose another id, or remove the account first.',
  },
  QQBOT_ACCOUNT_READ_ONLY: {
    status: 409,
    message: 'This QQ Bot account comes from the accounts file (HOST_QQBOT_ACCOUNTS_FILE); change it there and restart the host.',
  },
});
