import { defineErrors } from '@host/protocol';

/**
 * The admin API's own answers (libs/host-api, libs/admin-api): authentication, sessions, routes, settings and
 * the host's availability. A plugin never receives them.
 */
export const API_ERRORS = defineErrors({
  UNAUTHORIZED: {
    status: 401,
    message: 'Send the admin token as "Authorization: Bearer <token>", or sign in to the admin app at / for a session cookie.',
  },
  SESSION_TOKEN_INVALID: {
    status: 401,
    message:
      'The admin token is not the one this host accepts. Use the token printed at the first start (or the one in HOST_ADMIN_TOKEN_FILE); if it is lost, restart the host with --reset-admin-token.',
    causes: 'A typo, a token of another data directory, or a token replaced with --reset-admin-token.',
    fix: 'Use the token printed at the first start or the one in HOST_ADMIN_TOKEN_FILE; if it is lost, restart the host with --reset-admin-token (see docs/operator/security.md).',
  },
  SESSION_EXPIRED: {
    status: 401,
    message:
      'The admin session has ended (signed out, past its lifetime, idle too long, replaced by newer sessions, or the host restarted with the file store). Sign in again with the admin token.',
    causes:
      '12 hours after sign-in, an hour without a request, a sign-out in another tab, a host restart with the file store (sessions live in memory there), or 16 newer sessions.',
  },
  SESSION_SIGN_IN_THROTTLED: {
    status: 429,
    message: 'Too many wrong admin tokens from this address in the last minute. Wait a minute, then sign in with the right token.',
    causes:
      'Ten wrong tokens (at sign-in or as bearer tokens) from one client address within a minute, or fifty from all addresses together. Other addresses still sign in while one is throttled; the host logs each wrong token and throttle with its address.',
    fix: "Wait a minute. Behind a reverse proxy every client has the proxy's address, so one client guessing throttles all of them: look for \"wrong admin token\" lines in the host's log and the proxy's access log.",
  },
  AUTH_THROTTLED: {
    status: 429,
    message:
      'Too many wrong admin tokens from this address in the last minute; the request was refused without checking its token. Wait a minute, then send the right token.',
    causes:
      'A script retrying with a wrong or stale token, or someone guessing: ten wrong tokens (as bearer tokens or at sign-in) from one client address within a minute, or fifty from all addresses together.',
    fix: 'Fix the token the script sends (docs/operator/security.md), then wait a minute. The host logs each wrong token with its client address.',
  },
  CSRF_TOKEN_INVALID: {
    status: 403,
    message:
      'A request that changes something with the session cookie needs the X-CSRF-Token header of the session (GET /api/session answers it). Reload the admin app; scripts send "Authorization: Bearer <token>" instead.',
    causes: 'A script that copied the session cookie without the X-CSRF-Token header.',
    fix: 'Scripts send Authorization: Bearer <token> instead of a cookie.',
  },
  ORIGIN_REFUSED: {
    status: 403,
    message:
      'The request came from a page of another site (its Origin or Sec-Fetch-Site header says so). Use the admin app this host serves, or send "Authorization: Bearer <token>" from a script.',
    causes:
      "A reverse proxy rewrites the Host header, so the page's Origin is not the host the request reached; or a page of another site sent the request, which is refused on purpose.",
    fix: 'Forward the original Host header (nginx: proxy_set_header Host $http_host;). See docs/operator/deployment.md.',
  },
  NOT_FOUND: { status: 404, message: 'No such route. See GET /api/openapi.json for the admin API.' },
  PLUGIN_NOT_FOUND: { status: 404, message: 'No plugin with this pluginId. List plugins with GET /api/plugins.' },
  MEDIA_NOT_FOUND: {
    status: 404,
    message:
      'The host keeps no media with this id: it expired (media ids live 60 minutes), the host restarted, or it was never uploaded. Send the message again to upload the bytes again.',
  },
  EVENT_NOT_FOUND: {
    status: 404,
    message:
      "This host's event log keeps no event with this eventId: it was never received here, or it is older than the newest events the log keeps. List the recent events with GET /api/events.",
  },
  BAD_REQUEST: { status: 400, message: 'The request body is not valid. details.issues lists each field and the fix.' },
  REQUEST_JSON_TOO_COMPLEX: {
    status: 400,
    message:
      'The JSON body nests arrays and objects deeper than 64 levels, or one array or object has more than 10,000 entries. No admin API request needs that; send the documented shape.',
  },
  PLUGIN_STATE_CONFLICT: {
    status: 409,
    message: 'The plugin is not in a state that allows this action. See its state in GET /api/plugins/{pluginId}.',
  },
  RUNTIME_UNAVAILABLE: { status: 503, message: 'The plugin runtime is not available in this host build.' },
  DOCTOR_RUN_TIMEOUT: {
    status: 504,
    message:
      'The conformance suite did not finish within its time bound (details.timeoutSeconds), so the host ended the run and its plugin processes. Run host-plugin doctor on the package to see which scenario hangs.',
    causes:
      'A plugin whose handlers never send events.completed, that ignores events.cancel and its handler deadline, or that floods its pipes, keeps every scenario waiting for its bounds.',
    fix: 'Run `host-plugin doctor <package.zip>` locally: its report names the scenario and check that waited. Complete every accepted event, and honour events.cancel.',
  },
  STORE_UNAVAILABLE: {
    status: 503,
    message:
      "The host's database cannot be reached, so the host cannot read or record this now (new events included). Retry in a few seconds; the host reconnects by itself once the database answers again.",
    causes:
      'The PostgreSQL server of HOST_DATABASE_URL is stopped or restarting (maintenance, a failover), the network to it is down, or it refuses connections (max_connections reached). details.since says since when, details.reason what the last attempt found.',
    fix: 'Bring the database back; nothing needs restarting on the host. GET /api/ready answers 503 with this code until the host can use its database again: take the replica out of the load balancer meanwhile (see docs/operator/cluster.md).',
  },
  EVENTS_OVERLOADED: {
    status: 503,
    message:
      'The host did not take the event: the events waiting for plugins are at their bound. Nothing was recorded or delivered; send it again in a few seconds.',
    causes:
      'More events arrive than the plugins handle: the deliveries waiting for plugins, host-wide, reached HOST_MAX_WAITING_EVENTS. The QQ Bot webhook answers the same case with {"op": 12, "d": 1}, which asks the platform to push the event again.',
    fix: 'Find the plugin with the most waiting events in the admin app (its queue: waiting, oldest wait); make it handle events concurrently (concurrency.maxConcurrentEvents) or faster. Raise HOST_MAX_WAITING_EVENTS only when the host has the memory for it (docs/operator/configuration.md).',
  },
  SETTINGS_INVALID: {
    status: 422,
    message: 'The settings do not match settings.configSchema. details.issues lists each field and the fix.',
  },
  SETTINGS_REFUSED: {
    status: 422,
    message:
      "The running plugin refused the new settings; the host kept the previous values. details.reason gives the plugin's reason: correct the values and save again.",
    causes:
      "The plugin's own check of its settings (the Node SDK's onSettingsChanged) threw or answered settings.changed with an error, so it keeps running with the previous values (docs/protocol/v2.md 4.10).",
  },
  INTERNAL: { status: 500, message: 'An unexpected error happened. See the host log.' },
});
